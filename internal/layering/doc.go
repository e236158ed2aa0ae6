// Package layering holds no code, only tests that keep weir's import floors
// in place: api/ free of clients and controllers, nothing importing Flux's
// own modules, and domain packages never importing the CLI above them.
package layering
