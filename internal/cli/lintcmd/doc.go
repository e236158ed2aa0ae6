// Package lintcmd implements `weir lint [DIR]`: it loads the fleet
// repository offline with internal/fleet (the controllers' own build,
// substitution and decryption code) from the source's root — --root, else
// the Git work tree holding DIR, else DIR — with the entry points looked
// for inside DIR, applies internal/fleet/lint's rules, and prints the
// findings (-o text|json|sarif|github|markdown) or, with --graph, the graph
// itself (-o dot|mermaid|json). Exit status: 0 no error, 1 errors found, 2
// the repository could not be analysed.
package lintcmd
