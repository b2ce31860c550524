import { assets } from '../../../generated/web-assets.js'

// The review page's files, bundled by build.mjs from server/web/ into ag-server itself: nothing is
// read from disk or fetched at run time.

export interface Asset {
  type: string
  body: string
  etag: string
}

export function asset(name: string): Asset | undefined {
  return Object.hasOwn(assets, name) ? (assets as Record<string, Asset>)[name] : undefined
}
