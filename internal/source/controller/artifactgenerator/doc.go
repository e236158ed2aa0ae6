// Package artifactgenerator reconciles ArtifactGenerators
// (source.extensions.fluxcd.io/v1beta1), the kind Flux's source-watcher
// serves: it reads the artifacts of the sources a generator names, runs the
// generator's copy rules on them (internal/source/generate, the code the
// offline tools run too), stores each result as a digest-addressed
// tarball in weir's artifact storage and publishes it as an
// ExternalArtifact (source.toolkit.fluxcd.io/v1) that Kustomizations and
// HelmReleases consume like any other source.
//
// One run goes: validate the spec (a bad one stalls), observe the sources
// (their artifacts' URL, digest and revision; a source without an
// artifact waits --requeue-dependency), stop when nothing drifted (same
// generation, same sources digest, every stored tarball present and intact,
// every generated ExternalArtifact present with its digest), otherwise
// fetch the sources' artifacts (digest-verified, size-bounded, unpacked
// safely), build every artifact, apply its ExternalArtifact with the
// field manager source-watcher, and garbage-collect what the spec no
// longer produces.
//
// An artifact is named after its content: building the same files again
// gives the same tarball, the same digest and the same revision
// (latest@<digest>), and its ExternalArtifact is not written at all, so a
// commit that changes one app's directory of a monorepo moves only that
// app's artifact and the Kustomizations that read it.
//
// Names, messages, reasons, labels and the finalizer are Flux's
// (fluxcd/source-watcher), so the flux CLI and kstatus read the objects as
// they read Flux's.
package artifactgenerator
