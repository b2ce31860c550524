# ag-mcp as a container: an MCP server on stdio (run it with `docker run -i --rm`).
#   docker build -t ag-mcp .
#   docker run -i --rm -v ~/.config/ag-mcp/agent.token:/run/secrets/agwp.token:ro ag-mcp \
#     --upstream https://agentgit.example.com --token-file /run/secrets/agwp.token
# The build stage needs the sources and the dev dependencies; the image holds only the two
# bundled binaries (no node_modules: they are single files) and runs as the unprivileged `node`.
FROM node:20-alpine AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN node build.mjs

FROM node:20-alpine
COPY --from=build /src/dist/ag-mcp.mjs /src/dist/ag-server.mjs /opt/ag-mcp/
USER node
WORKDIR /home/node
ENTRYPOINT ["node", "/opt/ag-mcp/ag-mcp.mjs"]
