// Package objectview is the domain side of the UI's object page: one
// toolkit object's summary (objectstate's rule), conditions, history,
// source and dependsOn references, spec and inventory tree (Get), its
// Kubernetes Events (Events), what applying its source's current artifact
// would change in the cluster (Diff, through internal/kustomize/render and
// internal/view/livediff, the code of the controller and of `weir diff`), and
// what the caller may do with it (Permissions, SelfSubjectAccessReviews).
//
// Every call takes the requesting user's client and rest.Config: nothing
// here builds a client of its own, so the cluster's RBAC decides what a
// user sees. No HTTP, no HTML: internal/ui/server serves the results as
// JSON (the field names are the UI's contract, issue 18).
package objectview
