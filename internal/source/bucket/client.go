package bucket

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/weir-gitops/weir/internal/source/artifact"
)

// Sentinel errors; callers decide with errors.Is how to react.
var (
	// ErrInvalidConfig: the endpoint cannot be used as written; retrying
	// without a spec change fails the same way.
	ErrInvalidConfig = errors.New("invalid bucket configuration")
	// ErrBucketNotFound: the endpoint answered that the bucket does not
	// exist. Its message reads "bucket '<name>' not found", Flux's wording.
	ErrBucketNotFound = errors.New("not found")
	// ErrTooLarge: the listing or the download exceeded a bound.
	ErrTooLarge = errors.New("bucket content too large")
)

// Bounds on what one Bucket may bring in.
const (
	// DefaultMaxDownloadSize bounds the bytes Download writes in total.
	DefaultMaxDownloadSize int64 = 1 << 30
	// DefaultConcurrency is how many objects Download fetches at once.
	DefaultConcurrency = 16
	// maxObjects bounds a listing; like the artifact walker's entry bound,
	// it keeps a runaway bucket from exhausting memory.
	maxObjects = 1 << 20
	// maxIgnoreFileSize bounds the .sourceignore object.
	maxIgnoreFileSize = 1 << 20
	// maxRetries is minio-go's per-request retry count (its default is 10,
	// which can spend a whole timeout on an endpoint that is down).
	maxRetries = 3
)

// Config says how to reach an S3-compatible endpoint: the generic
// provider's settings, after the Secrets they refer to have been read.
type Config struct {
	// Endpoint is host[:port]. An http:// or https:// URL is accepted too,
	// without a path; its scheme then decides between HTTP and HTTPS, and
	// http:// requires Insecure.
	Endpoint string
	// Insecure talks plain HTTP to a bare host[:port] Endpoint.
	Insecure bool
	// Region is sent with every request; empty lets minio-go ask the
	// endpoint for the bucket's location.
	Region string
	// Credentials sign requests (SigV4); nil sends them anonymous unless
	// LDAP is set.
	Credentials *Credentials
	// LDAP, when set and Credentials is nil, obtains temporary credentials
	// from MinIO's STS (spec.sts.provider ldap).
	LDAP *LDAPConfig
	// TLS replaces the system's TLS client settings for HTTPS.
	TLS *tls.Config
	// Proxy, when set, carries every request; otherwise the usual
	// HTTPS_PROXY/NO_PROXY environment applies.
	Proxy *url.URL
}

// Client lists and downloads the objects of buckets on one endpoint,
// through a provider's Store.
type Client struct {
	store Store
}

// New validates cfg and returns a client for an S3 endpoint (the generic
// and aws providers); it makes no request.
func New(cfg Config) (*Client, error) {
	s, err := newS3Store(cfg)
	if err != nil {
		return nil, err
	}
	return NewClient(s), nil
}

// endpointHost splits a spec.endpoint into the host minio-go wants and
// whether to use TLS.
func endpointHost(endpoint string, insecure bool) (string, bool, error) {
	e := strings.TrimSpace(endpoint)
	if e == "" {
		return "", false, fmt.Errorf("%w: endpoint is empty", ErrInvalidConfig)
	}
	if !strings.Contains(e, "://") {
		return e, !insecure, nil
	}
	u, err := url.Parse(e)
	if err != nil {
		return "", false, fmt.Errorf("%w: endpoint '%s': %w", ErrInvalidConfig, endpoint, err)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil || u.Host == "" {
		return "", false, fmt.Errorf("%w: endpoint '%s' must be host[:port] or a URL without path, query or credentials", ErrInvalidConfig, endpoint)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u.Host, true, nil
	case "http":
		if !insecure {
			return "", false, fmt.Errorf("%w: endpoint '%s' is plain HTTP: set spec.insecure to allow it", ErrInvalidConfig, endpoint)
		}
		return u.Host, false, nil
	default:
		return "", false, fmt.Errorf("%w: endpoint '%s': scheme must be http or https", ErrInvalidConfig, endpoint)
	}
}

// Listing is what List saw in a bucket.
type Listing struct {
	// Objects are the objects under the prefix, in the endpoint's order.
	Objects []Object
	// IgnoreFile is the bucket's root .sourceignore, whatever the prefix,
	// or nil when there is none.
	IgnoreFile *Object
}

// List confirms that the bucket exists, lists the objects under prefix and
// finds the root .sourceignore (from the listing when the prefix covers
// it, with a HEAD otherwise). It downloads nothing.
func (c *Client) List(ctx context.Context, bucketName, prefix string) (*Listing, error) {
	exists, err := c.store.BucketExists(ctx, bucketName)
	if err != nil {
		return nil, fmt.Errorf("failed to confirm existence of '%s' bucket: %w", bucketName, err)
	}
	if !exists {
		return nil, fmt.Errorf("bucket '%s' %w", bucketName, ErrBucketNotFound)
	}
	l := &Listing{}
	err = c.store.ListObjects(ctx, bucketName, prefix, func(obj Object) error {
		if len(l.Objects) == maxObjects {
			return fmt.Errorf("%w: bucket '%s' lists more than %d objects", ErrTooLarge, bucketName, maxObjects)
		}
		if obj.Key == artifact.SourceIgnoreFile {
			o := obj
			l.IgnoreFile = &o
		}
		l.Objects = append(l.Objects, obj)
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return nil, err
		}
		return nil, fmt.Errorf("listing objects from bucket '%s' failed: %w", bucketName, err)
	}
	if strings.HasPrefix(artifact.SourceIgnoreFile, prefix) {
		return l, nil
	}
	info, err := c.store.StatObject(ctx, bucketName, artifact.SourceIgnoreFile)
	switch {
	case err == nil:
		l.IgnoreFile = &info
	case !errors.Is(err, ErrObjectNotFound):
		return nil, fmt.Errorf("failed to get Etag for '%s' object: %w", artifact.SourceIgnoreFile, err)
	}
	return l, nil
}

// ReadIgnoreFile downloads the .sourceignore object obj (1 MiB at most).
func (c *Client) ReadIgnoreFile(ctx context.Context, bucketName string, obj Object) (string, error) {
	o, _, err := c.store.GetObject(ctx, bucketName, obj.Key)
	if err != nil {
		return "", fmt.Errorf("failed to get '%s' object: %w", obj.Key, err)
	}
	defer o.Close()
	b, err := io.ReadAll(io.LimitReader(o, maxIgnoreFileSize+1))
	if err != nil {
		return "", fmt.Errorf("failed to get '%s' object: %w", obj.Key, err)
	}
	if len(b) > maxIgnoreFileSize {
		return "", fmt.Errorf("%w: '%s' object is larger than %d bytes", ErrTooLarge, obj.Key, maxIgnoreFileSize)
	}
	return string(b), nil
}
