package bucket

import (
	"context"
	"errors"
	"io"
)

// ErrObjectNotFound is what a Store answers for a key the bucket does not
// hold (a .sourceignore that is absent, an object deleted since the
// listing).
var ErrObjectNotFound = errors.New("object not found")

// Store is one provider's access to an object store: S3 through minio-go
// (generic and aws), Google Cloud Storage, Azure Blob Storage. Client puts
// Flux's listing, ignore-file and download rules on top, so every provider
// indexes, filters and names its revision the same way.
type Store interface {
	// BucketExists reports whether the bucket (Azure: container) exists.
	BucketExists(ctx context.Context, bucket string) (bool, error)
	// ListObjects calls visit for every object under prefix, recursively,
	// in the provider's order; an error from visit ends the listing.
	ListObjects(ctx context.Context, bucket, prefix string, visit func(Object) error) error
	// StatObject describes one object, or answers ErrObjectNotFound.
	StatObject(ctx context.Context, bucket, key string) (Object, error)
	// GetObject opens one object's content with what it is now (its ETag
	// may differ from the listing's), or answers ErrObjectNotFound.
	GetObject(ctx context.Context, bucket, key string) (io.ReadCloser, Object, error)
}

// NewClient puts the shared listing and download rules on a Store.
func NewClient(s Store) *Client { return &Client{store: s} }
