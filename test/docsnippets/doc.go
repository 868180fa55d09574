// Package docsnippets checks that every Go snippet in docs/*.md compiles
// against this tree (TestDocSnippetsCompile), so the documentation a
// driver author copies from cannot drift from the API.
package docsnippets
