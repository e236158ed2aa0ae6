// Package fleetdiff compares a fleet rendered at two revisions, as
// `weir diff --base` shows a pull request: per Kustomization and
// HelmRelease (matched by kind, namespace and name), the objects created,
// changed and deleted, each with a unified diff (Secret values masked by
// internal/apply/ssa's CompareManifests, the code `weir diff kustomization`
// uses), and a danger list of what the change will do to the cluster
// beyond updating objects in place:
//
//	prune-delete          an object leaves a prune: true Kustomization (or a
//	                      HelmRelease's manifest): it will be deleted
//	namespace-delete      that object is a Namespace: everything in it goes
//	crd-delete            that object is a CustomResourceDefinition: every
//	                      custom resource of its kind goes
//	immutable-field       a change the API server refuses in place
//	                      (selectors, Service clusterIP, Job template, PVC
//	                      class and modes, StatefulSet claim templates,
//	                      immutable ConfigMaps and Secrets, RoleBinding
//	                      roleRef, StorageClass parameters…): the apply
//	                      fails, or with force the object is recreated
//	removed-with-prune    a prune: true Kustomization (or a HelmRelease) is
//	                      removed by its parent's prune: its finalizer
//	                      deletes everything it applied (uninstalls)
//
// The package is pure: it sees two Sides, lists of rendered Nodes built
// by the caller (internal/cli/diffcmd loads them with internal/fleet), and
// writes text, Markdown or JSON. Nodes whose input digest is the same on
// both sides are not compared object by object: their render is the same.
package fleetdiff
