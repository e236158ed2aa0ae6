package bucket

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"sort"

	"github.com/weir-gitops/weir/internal/source/artifact"
)

// Object is one object of a bucket listing.
type Object struct {
	// Key is the object's full key, prefix included.
	Key string
	// ETag is the entity tag without quotes, as minio-go reports it.
	ETag string
	// Size is the length of the content in bytes, as listed.
	Size int64
}

// Index is what an artifact is built from: the objects that survived the
// prefix and the ignore rules, by key. Its Revision is the Bucket's
// artifact revision.
type Index map[string]Object

// NewIndex keeps the objects filter does not exclude and checks that each
// kept key can be written below a directory (see CheckKey). The bucket's
// root .sourceignore never enters the index, as in Flux. An unsafe key
// fails the whole index: half a bucket is not what the user stored.
func NewIndex(bucketName string, objects []Object, filter artifact.Filter) (Index, error) {
	ix := make(Index, len(objects))
	for _, o := range objects {
		if o.Key == artifact.SourceIgnoreFile || isDirMarker(o.Key) {
			continue
		}
		if filter != nil && filter.Exclude(o.Key, false) {
			continue
		}
		if err := CheckKey(o.Key); err != nil {
			return nil, fmt.Errorf("refusing object '%s' of bucket '%s': %w", o.Key, bucketName, err)
		}
		ix[o.Key] = o
	}
	return ix, nil
}

// Keys returns the keys in byte-wise order.
func (ix Index) Keys() []string {
	keys := make([]string, 0, len(ix))
	for k := range ix {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Size is the sum of the listed object sizes.
func (ix Index) Size() int64 {
	var n int64
	for _, o := range ix {
		n += o.Size
	}
	return n
}

// WriteTo writes the index the way Flux's source-controller digests it:
// one "<key> <etag>\n" line per object, keys sorted byte-wise.
func (ix Index) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for _, k := range ix.Keys() {
		n, err := io.WriteString(w, k+" "+ix[k].ETag+"\n")
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// Revision is the artifact revision of the index, "<algorithm>:<hex>" of
// what WriteTo writes. Flux uses its canonical digest algorithm, which
// --artifact-digest-algo sets (sha256 by default); an empty alg means
// sha256. An empty index has the digest of the empty string.
func (ix Index) Revision(alg artifact.Algorithm) (string, error) {
	if alg == "" {
		alg = artifact.DefaultAlgorithm
	}
	var h hash.Hash
	switch alg {
	case artifact.SHA256:
		h = sha256.New()
	case artifact.SHA384:
		h = sha512.New384()
	case artifact.SHA512:
		h = sha512.New()
	default:
		return "", fmt.Errorf("unsupported digest algorithm %q", string(alg))
	}
	_, _ = ix.WriteTo(h)
	return string(alg) + ":" + hex.EncodeToString(h.Sum(nil)), nil
}

// isDirMarker reports keys some tools create to show an empty "folder".
func isDirMarker(key string) bool { return len(key) > 0 && key[len(key)-1] == '/' }
