// Package tagpolicy elects the latest tag of a list by an ImagePolicy's
// rules, as Flux's image-reflector-controller does: filterTags first (a
// regular expression a tag must match, and an optional extract template,
// "$name" or "${1}", whose expansion is what gets ordered), then one of
// three orders:
//
//   - semver: the highest tag that is a strict semantic version (an
//     optional leading "v") within the range (Masterminds semver
//     constraints); pre-releases only when the range names one;
//   - alphabetical: byte order, asc elects the last, desc the first;
//   - numerical: the value as a float64, asc elects the largest, desc the
//     smallest; a tag that is not a number fails the election.
//
// The elected tag is always the original one, not its extracted value. The
// error messages are Flux's.
package tagpolicy
