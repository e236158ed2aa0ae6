// Package treecmd implements `weir tree kustomization NAME`: the objects a
// Kustomization applied, read from its status.inventory, with the
// inventories of the Kustomizations (and HelmReleases) it applied nested
// below them, drawn as `flux tree` draws them.
package treecmd
