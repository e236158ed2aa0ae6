// Package sharedtree owns the artifacts the kustomize controller builds
// from, once fetched: one tree per artifact digest, in memory when small
// and made of regular files (artifact.Tree), else extracted to a directory
// of its own, shared by every build that reads it at the same time and
// kept, the newest Kept of them, for the builds that follow. A digest
// names the content, so a tree never goes stale; a fetch that fails is not
// kept.
//
// It knows nothing of Kustomizations: the controller says how to fetch
// (Fetch), reads the Source it gets and gives it back.
package sharedtree
