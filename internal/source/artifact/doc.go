// Package artifact owns what a source controller does with files once it
// has fetched them: turning a directory into a deterministic tarball,
// storing it under a digest, serving it over HTTP, retiring old versions,
// and, for the controllers downstream, extracting such tarballs safely.
//
// # Layout
//
// A Storage is rooted at --storage-path and keeps each object's files at
// <kind-lowercase>/<namespace>/<name>/<file>, for example
// gitrepository/default/podinfo/<sha>.tar.gz, served at
// http://<--storage-adv-addr>/<same path>. Every path is checked to have
// exactly those four plain segments (no "..", no leading dot), and every
// file operation goes through an os.Root, so neither a crafted status nor a
// link planted in the storage directory reaches outside it. Files are
// written to a ".<name>.tmp-<random>" file in the same directory, synced,
// and renamed into place: a reader sees the previous file or the new one,
// never a part. Storage.Lock serialises the work on one object inside the
// process; a reconciler holds it from archiving to garbage collection.
//
// Digests are "<algorithm>:<hex>" of the stored bytes, sha256 by default,
// sha384 or sha512 with --artifact-digest-algo. Flux also accepts blake3;
// weir rejects it at start-up rather than compute something else.
//
// # Deterministic archives
//
// WriteArchive depends only on the paths, contents and executable bits of
// what it archives: entries sorted byte-wise by path, files 0644 or 0755,
// directories 0755, every time at the Unix epoch, owner and group 0 without
// names, and a gzip header with no name and no time. Only regular files and
// directories are written; devices, FIFOs and sockets are left out. The same
// tree therefore gives the same bytes and digest whatever the order it was
// checked out in, its file times, its umask or the user running the
// controller (for a given Go version, whose compressor fixes the bytes).
//
// # Symbolic links
//
// Flux's source-controller leaves every symbolic link out of its artifacts,
// which users keep tripping over (shared values files, Helm library charts
// linked into charts/). weir instead follows a link when its target resolves
// inside the archive root and stores it as a copy of the target: a regular
// file with the target's content and executable bit, or a directory walked
// recursively under the link's own path. A link is skipped, and reported in
// ArchiveStats.SkippedLinks, when its target is absolute (even one pointing
// into the root: it depends on where the checkout happens to live), when any
// step of its resolution — "..", a chain of links — leaves the root even if
// a later step would come back, when it dangles or loops, or when it leads
// to a directory that contains the link (a copy would never end). Targets
// are resolved by os.Root, so the decision is the kernel-visible one and
// nothing outside the root is ever opened. SkipSymlinks restores Flux's
// behaviour exactly. Ignore rules see links by their own path.
//
// # Size bounds
//
// An archive is bounded in its uncompressed tar stream (default 1 GiB) and
// its compressed size (default 512 MiB), and a walk visits at most 2^20
// entries, so links that multiply a tree cannot keep it busy. Exceeding a
// bound fails with ErrArchiveTooLarge and leaves no file behind: the
// temporary file is removed and the final name never appears.
//
// # Ignore rules
//
// Rules use gitignore syntax (go-git's matcher, as Flux uses a copy of it).
// What Flux's documentation says (source-controller docs/spec/v1,
// gitrepositories.md "Excluding files", "Default exclusions"):
//
//   - by default the artifact leaves out Git files (.git/, .gitignore,
//     .gitmodules, .gitattributes), file extensions (*.jpg, *.jpeg, *.gif,
//     *.png, *.wmv, *.flv, *.tar.gz, *.zip), CI configs (.github/,
//     .circleci/, .travis.yml, .gitlab-ci.yml, appveyor.yml, .drone.yml,
//     cloudbuild.yaml, codeship-services.yml, codeship-steps.yml), CLI
//     configs (.goreleaser.yml, .sops.yaml) and Flux v1's .flux.yaml;
//   - .sourceignore files are loaded recursively, from the root and from
//     subdirectories, and their entries "may overrule" the defaults;
//   - spec.ignore "overrides the default exclusion list, and may overrule
//     the .sourceignore file exclusions".
//
// What the controller does, which decides the wording's ambiguity and which
// weir follows so that a repository yields the same file set under both:
// the rules are, lowest priority first, the VCS exclusions (always), then
// the remaining defaults only when there is no custom rule at all, then
// every .sourceignore (parents before children, siblings in name order,
// each scoped to its own directory and below; .git directories are not
// searched), then spec.ignore scoped to the root. So one non-comment line in
// any .sourceignore, or a non-empty spec.ignore, drops the extension, CI and
// CLI defaults — not the VCS ones — for the whole tree, and spec.ignore,
// coming last, can re-include with "!" what a .sourceignore excluded. An
// empty or comment-only spec.ignore keeps the defaults. The last matching
// rule wins and each path is judged on its own, so unlike git a "!" rule can
// bring back a file whose parent directory is excluded (the parent's entry
// stays out); Archive only skips an excluded directory's contents when no
// "!" rule exists. .sourceignore files are themselves archived.
//
// # Retention
//
// GarbageCollect follows Flux's rules: the current file stays; other files
// older than --artifact-retention-ttl (1m) go; of the rest only the newest
// go while more than --artifact-retention-records (2) files, current
// included, would remain.
//
// # Serving and extracting
//
// Server answers GET and HEAD for stored regular files only: directories,
// unclean or dot-segment paths in any encoding, temporary files and links
// are 404. Untar extracts for downstream controllers and treats the archive
// as hostile: see its documentation for what it refuses. ReadTree reads a
// small archive of regular files and directories into memory instead
// (Tree, an io/fs.FS), through the same reader and the same entry checks,
// so it refuses what Untar refuses in the same words; an archive with a
// link or over its budget is left to Untar (ErrNeedsDisk), which
// Fetcher.FetchTree does by itself.
package artifact
