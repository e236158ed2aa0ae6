// Package buildcache owns the kustomize controller's build cache: the
// last build of each Kustomization, kept as JSON under a key (Key) that
// hashes everything the build reads besides the tree — the artifact
// digest, the spec, the post-build variables and the render options — and
// bounded by a budget of objects over all Kustomizations, the oldest
// entry going first. A reconcile whose inputs have not changed takes its
// objects from here and skips the download and kustomize.
//
// It knows nothing of reconciles: the controller computes the key, asks,
// builds on a miss, stores, and forgets a deleted Kustomization.
package buildcache
