// Package generate owns what an ArtifactGenerator does with files: given
// the trees of its sources by alias (plain directories) and its spec, it
// expands spec.pathPattern into the artifacts to build and writes the tree
// of each artifact by running its copy operations in order. It knows
// nothing of Kubernetes, storage or HTTP, so the ArtifactGenerator
// controller and the offline tools (weir lint, weir build) can run the very
// same rules.
//
// # Copy semantics
//
// They are source-watcher's (fluxcd/source-watcher's builder), which
// follow cp:
//
//   - from without wildcards names one file or directory. A file goes to
//     "to" as that name, or into it when "to" ends with "/" or is already a
//     directory of the artifact; a directory is copied as a subdirectory of
//     "to" ("@src/configs/" to "@artifact/apps/" gives apps/configs/...),
//     and "@src/" copies the whole source into "to".
//   - from with wildcards always copies into "to" as a directory. A pattern
//     ending in "/**" strips its prefix (dir/** copies dir's contents);
//     any other pattern keeps the whole source path of each match.
//     Matched directories are copied with everything under them.
//   - "*", "?" and "[...]" match within one path segment and "**" matches
//     any number of segments, zero included, as doublestar does.
//   - exclude patterns are matched against the source path and against the
//     path below the pattern's literal prefix; a pattern without "/" also
//     matches a base name at any depth. An excluded directory is skipped
//     whole.
//   - Merge deep-merges a YAML map into the file already at the
//     destination, maps key by key and everything else (lists included)
//     replaced, as Helm merges several --values files; with nothing at the
//     destination it copies.
//   - Extract unpacks .tar.gz and .tgz files into "to"; a glob skips other
//     files, a single file must be a tarball, a directory is refused.
//
// # Safety
//
// Sources are read and the artifact written through os.Root, so nothing
// outside either tree is ever opened: "to" may not climb out with "..", a
// symbolic link of a source whose target leaves the source, or is a
// directory, fails the build with an error naming it, and tarballs are
// unpacked by internal/source/artifact's Untar, which refuses the entries
// it documents. Every artifact is bounded (Options): the bytes written, the
// number of files, and each tarball's compressed and unpacked size, the
// unpacked bound being given to the extractor before it reads a byte.
package generate
