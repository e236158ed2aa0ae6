// Package treecmd implements `weir tree kustomization|helmrelease NAME`: the
// objects a Kustomization applied or a HelmRelease's release holds, walked
// by internal/view/inventorytree, drawn as `flux tree` draws them.
package treecmd
