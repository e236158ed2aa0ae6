// Package treecmd implements `weir tree kustomization|helmrelease NAME`: the
// objects a Kustomization applied or a HelmRelease's release holds, read
// from their status.inventory (for a HelmRelease without one, from the
// latest release's manifest in Helm's storage), with the inventories of
// the Kustomizations and HelmReleases among them nested below, drawn as
// `flux tree` draws them.
package treecmd
