// Package plugincmd implements `weir plugin list|search|install|uninstall|
// update` and runs installed plugins as `weir NAME ARGS…`, over Flux's
// plugin catalog and plugin directory, so that one directory serves both
// CLIs.
//
// The catalog is Flux's: a base URL ($FLUXCD_PLUGIN_CATALOG, else the
// latest release of fluxcd/plugins) holding catalog.yaml (kind
// PluginCatalog) and one NAME.yaml per plugin (kind Plugin, apiVersion
// cli.fluxcd.io/v1beta1), whose versions list the newest first and give,
// per os/arch, an archive URL and its "sha256:<hex>" checksum. The plugin
// directory is Flux's too: $FLUXCD_PLUGINS, else ~/.fluxcd/plugins, holding
// each binary under the name its manifest's bin gives (flux-NAME) and a
// receipt flux-NAME.yaml recording the version installed.
//
// Why share rather than keep a weir-only directory: the plugins published
// in Flux's catalog (flux-operator and others) are standalone binaries that
// talk to the cluster themselves, not to the flux binary, so they work the
// same under weir; sharing the directory and receipts means a plugin
// installed by either CLI shows, updates and uninstalls from the other.
// Discovery also accepts weir-NAME binaries, for plugins written for weir
// alone; a weir-NAME shadows a flux-NAME of the same name.
//
// Differences from the flux CLI, on purpose:
//   - an archive is bounded before it is unpacked (MaxArchiveSize for the
//     download, MaxBinarySize for what is unpacked) and its checksum is
//     verified before anything is written to the plugin directory; the new
//     binary replaces the old one with a rename, so a failed install leaves
//     the previous version in place;
//   - a manifest's bin must be a bare file name starting with flux- or
//     weir-, so a catalog cannot make weir write outside the plugin
//     directory or over another program;
//   - weir runs a plugin as a child process (stdin, stdout, stderr passed
//     through, its exit code returned) rather than replacing itself with
//     it, so that tests and `weir` embedded in other programs see the
//     plugin's output and exit code.
package plugincmd
