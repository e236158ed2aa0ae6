// Package output owns how weir's commands write: progress lines on stderr
// with Flux's glyphs (► action, ◎ waiting, ✔ done, ✗ failed, ⚠ warning), the
// flux CLI's borderless tables on stdout, and the kubectl formats beyond them
// (-o yaml|json|name, yaml and json as a v1 List).
package output
