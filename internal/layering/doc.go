// Package layering holds no code of weir's, only the tests that keep the
// house standing: every package of the module has a floor (floors_test.go) and
// imports nothing above it; api/ stays free of clients and controllers;
// nothing imports Flux's own modules; the binaries carry no test servers; and
// the README's layout and the paths the docs and package docs name are the
// house as it is (layout_test.go), so a move leaves no stale map behind.
package layering
