// Package setters rewrites the image references that setter markers point
// at, the ImageUpdateAutomation's Setters strategy, exactly as Flux's image
// automation does. A marker is a YAML comment holding a JSON object whose
// "$imagepolicy" key names a policy, <namespace>:<name>, optionally with a
// part of the image to write:
//
//	image: ghcr.io/org/app:1.0.0 # {"$imagepolicy": "flux-system:app"}
//	repository: ghcr.io/org/app  # {"$imagepolicy": "flux-system:app:name"}
//	tag: 1.0.0                   # {"$imagepolicy": "flux-system:app:tag"}
//	digest: sha256:…             # {"$imagepolicy": "flux-system:app:digest"}
//
// The whole-image setter writes name:tag, or name:tag@digest when the
// policy reflects a digest. The line comment of a scalar is read first,
// then its head comment; only scalars are rewritten. A marker naming a
// policy that is not given (unknown, not selected, no latest image yet)
// is left alone, as is a digest setter while the policy has no digest.
//
// Files are read and written through the small FS interface (the
// automation's in-memory Git checkout implements it), so this package does
// no I/O of its own and never sees a path outside the tree it is given.
// Only files named *.yaml, *.yml or Kustomization that contain the quoted
// token "$imagepolicy" are parsed; a file that then fails to parse is
// skipped, not an error (a Helm template mentioning the token is not
// YAML). Parsing and writing go through kyaml, which keeps comments,
// document order and sequence indentation; a rewritten file may still
// differ from its original in insignificant whitespace, as with Flux.
//
// The changes are returned as Result, the shape Flux gives commit message
// templates as .Changed: file → object → changes, with Objects and
// Changes helpers.
package setters
