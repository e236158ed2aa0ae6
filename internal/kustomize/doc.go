// Package kustomize owns the rendering of a Kustomization: from an extracted
// source artifact and the spec fields that shape the build, to the objects
// kustomize-controller would apply. The controller and `weir build
// kustomization` both call Build, so the CLI shows exactly what the cluster
// gets. The package takes plain inputs and talks to no cluster: post-build
// variables arrive as a map the caller has assembled.
//
// # Pipeline
//
// Build runs the steps in kustomize-controller's order:
//
//  1. Resolve spec.path inside the root. Absolute paths and ".." escapes
//     are refused (Flux clamps them with a secure join; refusing is
//     clearer, and no valid Kustomization needs either).
//  2. Load the kustomization file at that path, or generate one (below).
//  3. Merge the spec into that same file, in memory. Flux does not wrap the
//     user's kustomization in an overlay: its generator rewrites the root
//     kustomization.yaml in place (fluxcd/pkg kustomize/kustomize_generator.go),
//     and the difference is visible, so weir does the same:
//     targetNamespace, namePrefix and nameSuffix replace the file's own
//     namespace/namePrefix/nameSuffix (an overlay would stack the prefixes);
//     spec.patches are appended to the file's patches, so their targets
//     name objects as they are at that level; spec.components are appended
//     to the file's components; spec.images are merged field by field into
//     an entry of the same name (newName, newTag, digest each override only
//     when set) or appended; spec.buildMetadata replaces buildMetadata. The
//     file is decoded leniently, as Flux decodes it, so fields kustomize
//     does not know are dropped rather than failing its strict read, and a
//     kustomization listing no resources gets buildMetadata
//     [originAnnotations] so kustomize does not call it empty.
//  4. Inspect every local kustomization the build will load (see Remote
//     references) and refuse Helm chart inflation. The walk also lists the
//     files kustomize-controller decrypts before building: secretGenerator
//     files and envs, and patch files (see Decryption).
//  5. Decrypt those files that are SOPS documents, in memory (with no
//     Decryptor, an encrypted one fails the build).
//  6. Run kustomize (krusty) on the confined filesystem with plugins
//     disabled: builtin generators and transformers only, no exec or
//     container KRM functions, no Helm. Loads are not restricted to the
//     kustomization's own directory (Flux's LoadRestrictionsNone); the
//     source root is the boundary instead. Output order is kustomize's
//     input order, unsorted, as in Flux.
//  7. Refuse any object without apiVersion, kind or name.
//  8. Decrypt the objects, when BuildOptions.Decryptor is set: this is
//     where kustomize-controller decrypts, before substitution.
//  9. Substitute variables, when BuildOptions.PostBuild is set.
//  10. Refuse any object still holding SOPS content (see Decryption).
//  11. Take the checksum (unless SkipChecksum), then apply spec.commonMetadata to the objects.
//     Flux applies commonMetadata at apply time, after it has computed the
//     digest and after substitution, so neither sees it; weir keeps that
//     order.
//
// # Generated kustomization
//
// When the path holds no kustomization.yaml, kustomization.yml or
// Kustomization, one is generated in memory listing, in lexical walk order,
// every .yaml and .yml file below the path ("./dir/file.yaml") and every
// subdirectory holding its own kustomization file (listed as a directory and
// not descended into). As in Flux, files are not skipped for not being
// Kubernetes objects: a YAML file that kustomize cannot decode as objects
// fails the build naming the file (a .sops.yaml or CI file must be excluded
// at the source with .sourceignore or spec.ignore). Other extensions are
// ignored. A path with no manifests builds to zero objects.
// BuildOptions.Exclude leaves paths out of the generated list; Flux has no
// such setting, and only the offline fleet loader sets it (for the root it
// assumes for an entry point, see internal/fleet).
//
// # Confinement
//
// kustomize reads through confinedFS, a filesys.FileSystem over the disk
// that resolves every path it is handed, refuses those that leave the root
// lexically or through a symlink, serves the merged kustomization file from
// memory, is read-only, and logs each source file read (Result.Files). A
// wrapper was chosen over copying the tree into kustomize's in-memory
// filesystem because an artifact may be a large monorepo of which one path
// is built: the wrapper reads only what the build touches. kustomize often
// rewords a filesystem error; Build reports the refusal itself.
//
// The source can also be in memory (BuildOptions.Tree: the controller holds
// a small artifact of regular files so, see artifact.ReadTree). confinedFS
// then serves the paths below the root from the tree under a virtual
// absolute root (memoryRoot) that is never looked up on disk, resolves them
// lexically (the tree has no links), and fails with the os package's
// operation and errno for the same path, so that every message, relativized
// to the root, is the one the same tree on disk gives
// (TestBuildFromMemoryAsFromDisk). kustomize's clones of remote bases stay
// on disk, served as before.
//
// # Remote references
//
// kustomize fetches http(s) files with its own HTTP client and clones Git
// bases by running git, before any filesystem call, so confinement cannot
// stop them. Build therefore walks the local kustomizations first and judges
// each field that names something to load, with kustomize's own rules:
// resources (a local file, else an http(s) URL, else anything its Git URL
// parser accepts), components (Git URL parser), generators, transformers
// and validators (inline configuration, or as resources, and the paths the
// builtin plugin configurations name), and the file fields (crds,
// configurations, patches, replacements, openapi, configMapGenerator and
// secretGenerator files and envs: http(s) URLs). With NoRemoteBases every
// remote reference fails, naming the URL and the kustomization holding it,
// before any connection is made. file:// Git URLs are refused always: they
// clone from the local disk, outside the root. With remote bases allowed
// (Flux's default), kustomize's clones under the temporary directory are
// readable, and nothing else outside the root is.
//
// # Decryption
//
// SOPS itself lives in internal/kustomize/decrypt; Build sees it through the small
// Decryptor interface of this package, so the dependency points from
// decrypt to kustomize, never back. With a Decryptor, the build decrypts
// what kustomize-controller decrypts: secretGenerator files and envs and
// patch files of the local kustomizations, read once before kustomize runs
// and served to it from memory (Flux rewrites them on disk; nothing is
// written here), then every built object that is a whole SOPS document or a
// Secret holding SOPS documents as values. Objects annotated
// kustomize.toolkit.fluxcd.io/decrypt: disabled are left alone.
// configMapGenerator sources are never decrypted, as in Flux.
//
// weir adds one rule Flux does not have: ciphertext is never passed on.
// Without a Decryptor, a SOPS-encrypted source file fails the build with
// ErrDecryptionRequired naming the file, and so does any object holding
// SOPS content (a sops stanza, a Secret value that is a SOPS document, or
// an ENC[AES256_GCM,...] value), with Flux's wording ("<Kind>/<ns>/<name>
// is SOPS encrypted, configuring decryption is required for this secret to
// be reconciled"); Flux refuses only v1 Secrets with a sops stanza, at
// apply time, and applies a Secret generated from an encrypted env file
// with its ciphertext. With a Decryptor, ciphertext left over (a ConfigMap
// generated from an encrypted file, say) fails with ErrStillEncrypted. The
// decrypt: disabled annotation is the way out for objects meant to reach
// the cluster encrypted, except v1 Secrets with a sops stanza, which Flux
// never applies either. Decryption errors name the file or object
// ("decryption failed for 'Secret/ns/name': ...") and carry no plaintext.
//
// # Concurrency
//
// Builds share no mutable state of this package. kustomize itself keeps its
// OpenAPI schema in process-wide variables that a kustomization can replace
// (openapi:), so the kustomize run is serialized by a mutex and a custom
// schema is reset afterwards; the rest of Build runs in parallel.
//
// # Substitution
//
// Substitute implements Flux's post-build substitution with its own
// expansion engine (envsubst.go documents the dialect). It runs per object
// on the object's YAML as kustomize renders it (sorted keys, default
// scalar styles; quoting in the source file does not survive, which is why
// Flux documents the ${quote} idiom for numbers). Objects labelled or
// annotated kustomize.toolkit.fluxcd.io/substitute: disabled are skipped.
// With strategy WithVariables (the default) nothing happens unless at least
// one variable is defined, counted after the caller has merged
// substituteFrom and substitute (kustomize-controller tests len(vars) > 0);
// with Always it runs regardless. Strict mode, the default since Flux 2.9,
// fails on an unset variable that has no default, naming the variable and
// the object. Variable names must match ^[_[:alpha:]][_[:alpha:][:digit:]]*$;
// newlines are stripped from values.
//
// # Checksum
//
// Result.Checksum is "sha256:<hex>" of ToYAML(objects) taken after
// substitution and before commonMetadata. ToYAML renders each object as
// kustomize's resmap does (JSON, then YAML, so keys are sorted) and joins
// documents with "---\n", so the value equals the digest kustomize-controller
// stores in status.history for the same build.
//
// # Reusing builds across trees
//
// A BuildCache carried by the context (WithBuildCache) lets a tool that
// builds the same Kustomizations from several source trees — `weir diff
// --base` renders two revisions — skip kustomize for a Kustomization whose
// options and observed inputs (the files it read, the directories holding
// them) are the same in both: one build per changed application.
//
// # Transform
//
// Transform applies patches and images to a stream of manifests, in memory:
// the HelmRelease's kustomize post-renderer. It merges them into a generated
// kustomization with the same code as step 3 and runs kustomize under the
// same lock and options, so a patch means the same in both kinds.
package kustomize
