// What an agit tool answers: AGIT's text, and whether AGIT would mark it `isError`.
import type { FailureCode } from '../../core/src/plugin-api.ts'

export interface ToolText {
  text: string
  isError?: boolean
  /** Why, for an error: the plugin contract's code (`invalid` when not said). */
  code?: FailureCode
}
