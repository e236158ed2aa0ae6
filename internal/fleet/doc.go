// Package fleet loads a fleet repository offline: the graph of Flux
// objects each cluster would get, built with the controllers' own code.
//
// Load starts from each entry point, builds it as the root Kustomization
// would (internal/kustomize/render.Kustomization, which runs internal/kustomize.Build
// and the controller's substitution and SOPS decryption), collects the
// Flux objects the build yields (sources, Kustomizations, HelmReleases),
// then builds every Kustomization whose source is local, and repeats until
// no new Kustomization appears. Nothing talks to a cluster: ConfigMaps and
// Secrets that spec.postBuild.substituteFrom and spec.decryption read come
// from the objects the graph itself applies, through a client.Reader over
// them (a Secret's stringData merged into data, as the API server does).
// A Kustomization is built once its source and its non-optional
// substituteFrom objects are in the graph; when none is, the first waiting
// one is built anyway and fails as it would in the cluster. The ready ones
// are built concurrently and added to the graph in queue order, so the
// graph does not depend on which build finishes first. A build that fails
// on an undefined variable (strict substitution) is repeated leniently so
// that what lies below it is still loaded; the node keeps the error.
// docs/design/0016-offline-fleet-graph.md gives the reasons.
//
// # Entry points
//
// Options.Paths, or, inside Options.Within (the whole repository by
// default), every directory a root sync builds (a Kustomization whose
// spec.path holds the file it is written in: clusters/dev holding
// flux-system/gotk-sync.yaml with path ./clusters/dev), and every directory
// directly under Within's clusters/ directory (or under Within, when it is
// a clusters/ directory), except those another cluster's root build reads
// (a shared clusters/base). A Within below the root that holds none of
// these is the entry point itself. Only the directories looked in or at
// are walked for root syncs: a root sync lies inside what it builds.
// Every spec.path is relative to Dir, the source's root, wherever Within
// is: `weir lint clusters/staging` in a Git work tree loads the work tree
// (WorkTreeRoot) with Within clusters/staging. Paths and Within never lead
// out of Dir, by ".." or through a symlink.
//
// An entry point without a root sync gets the root bootstrap creates,
// implicitly: Kustomization and GitRepository flux-system/flux-system,
// prune: true, no wait, the source being this repository. When other entry
// points do have a root sync, the repository's convention says this one is
// not synced: Cluster.MissingRoot is set and the implicit root is
// invisible to Cluster.Node, so a dependsOn naming it dangles.
//
// The implicit root builds the entry directory as kustomize-controller
// would, with one difference: its generated kustomization leaves out what
// the Kustomizations written inside the entry sync themselves (the paths
// they name below it, and what their builds read there; claims.go says
// which). kustomize-controller's generator lists every YAML file below
// the path, children's directories included; a root the repository holds
// is built so, and its children's objects are then applied twice, which
// lint reports. The implicit root is the loader's own assumption, and the
// assumption an entry directory holding both the Kustomizations and what
// they sync supports is a root applying the Kustomizations alone.
//
// # Local sources
//
// A Kustomization is built when its source stands for a directory: the
// root's own source, a GitRepository whose spec.url is one of the
// repository's Git remotes or Options.SourceURLs (compared as host/path),
// or a source Options.Sources maps to a directory. Others are recorded
// (Node.Built false), not fetched: the loader never leaves the disk. The
// branch or tag a GitRepository names is not checked: the loaded tree
// stands for every ref of the repository.
//
// # Positions and inputs
//
// Each node and each built object has the repository-relative file and
// line defining it. The build asks kustomize for origin annotations
// (buildMetadata: [originAnnotations]), reads the file from them and the
// line from the file's YAML documents (kyaml), and removes the annotations
// again unless the Kustomization asked for them: the objects are those the
// cluster would get. Node.Files are the files the build read, and
// Node.InputDigest hashes them with the spec and the variables, so that a
// caller comparing two revisions rebuilds only what changed.
//
// Load reads a directory, or an fs.FS (Options.FS) that it copies into a
// temporary directory first, because kustomize.Build confines itself to a
// directory on disk.
package fleet
