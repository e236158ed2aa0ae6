// Package inventorytree walks what a Kustomization or HelmRelease manages:
// the objects of its status.inventory (for a HelmRelease without one, the
// latest release's manifest in Helm's storage), with the inventories of the
// Kustomizations and HelmReleases among them nested below. An
// ArtifactGenerator's inventory is the ExternalArtifacts it generated, each
// with the Kustomizations and HelmReleases that read it when asked
// (Options.Consumers). `weir tree`
// prints the tree; the UI's object page shows it, each node with the state
// of its live object when asked (Options.States).
package inventorytree
