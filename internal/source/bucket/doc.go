// Package bucket owns the storage side of a Bucket source: reaching the
// provider's object store through a Store (S3 with minio-go for the
// generic and aws providers, Google Cloud Storage, Azure Blob Storage),
// listing a bucket into an object index, turning the index into Flux's revision, and
// downloading the indexed objects into a directory without letting a key
// write anywhere else.
//
// # Revision
//
// Flux's source-controller (fluxcd/source-controller/internal/index/digest.go,
// used by fluxcd/source-controller/internal/controller/bucket_controller.go)
// digests the index as one "<key> <etag>\n" line per object, keys sorted
// byte-wise, ETags as minio-go reports them (without quotes), and writes the
// result as "<algorithm>:<hex>" with its canonical algorithm (sha256 unless
// --artifact-digest-algo says otherwise). Index.Revision does exactly that,
// so an empty bucket has revision
// sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.
// The artifact file is named after the hex part: <hex>.tar.gz.
//
// # What enters the index
//
// List sends HEAD on the bucket (so a missing bucket reads "bucket '<name>'
// not found" rather than an empty listing), lists the objects under
// spec.prefix recursively, and finds the root .sourceignore: Flux reads only
// that one, at the bucket's root whatever the prefix, and never indexes it.
// Keys ending in "/" (folder markers) are skipped. NewIndex then drops the
// keys the ignore rules exclude and refuses the rest if any is unsafe (see
// CheckKey).
//
// The ignore rules are built by the caller with artifact.NewFilterFromRules
// from the .sourceignore text and spec.ignore, in that order, so weir's one
// implementation of Flux's precedence applies: the VCS exclusions always,
// Flux's documented default exclusions (*.png, .github/, …) only while no
// custom rule exists, and spec.ignore last. Flux's documentation promises
// those defaults for Buckets; its controller code
// (fluxcd/source-controller/internal/controller/bucket_controller.go,
// fetchEtagIndex) matches keys against the .sourceignore and spec.ignore
// rules alone and archives with no filter. weir follows the documentation,
// so a bucket holding e.g. images and no custom rule gets a different index,
// hence revision, than under Flux.
//
// # Downloads
//
// A key comes from whoever can write to the bucket, so it is data, not a
// path. Download writes through an os.Root on the target directory, with
// O_EXCL, after CheckKey has refused absolute keys, "..", "." and empty
// segments, NUL and backslashes. The listed sizes are summed against a bound
// (1 GiB by default) before the first GET, and the bytes received are
// counted against it while they stream.
package bucket
