// The git identity and configuration tests run git with: no system or user config, a fixed
// author and committer, so a commit never depends on the machine's global settings.
export const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'Test Person',
  GIT_AUTHOR_EMAIL: 'person@test.invalid',
  GIT_COMMITTER_NAME: 'Test Person',
  GIT_COMMITTER_EMAIL: 'person@test.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
}
