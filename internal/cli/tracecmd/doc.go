// Package tracecmd implements `weir trace`: from an object in the cluster
// back through the GitOps pipeline that applied it (its Kustomization or
// HelmRelease, found by the labels Flux's controllers set, following owner
// references when the object has none) to the source and revision it came
// from, printed in the flux CLI's layout.
//
// Differences from the flux CLI: the report goes to stdout and failures to
// trace exit 1; a Kustomization's Bucket source is traced too.
package tracecmd
