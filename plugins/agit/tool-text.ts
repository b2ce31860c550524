// What an agit tool answers: AGIT's text, and whether AGIT would mark it `isError`.
export interface ToolText {
  text: string
  isError?: boolean
}
