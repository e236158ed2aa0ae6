package bucket

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"

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
	// Credentials sign requests (SigV4); nil sends them anonymous.
	Credentials *Credentials
	// TLS replaces the system's TLS client settings for HTTPS.
	TLS *tls.Config
	// Proxy, when set, carries every request; otherwise the usual
	// HTTPS_PROXY/NO_PROXY environment applies.
	Proxy *url.URL
}

// Client lists and downloads the objects of buckets on one endpoint.
type Client struct {
	mc *minio.Client
}

// New validates cfg and returns a client; it makes no request.
func New(cfg Config) (*Client, error) {
	host, secure, err := endpointHost(cfg.Endpoint, cfg.Insecure)
	if err != nil {
		return nil, err
	}
	transport, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, fmt.Errorf("failed to create transport: %w", err)
	}
	if secure && cfg.TLS != nil {
		transport.TLSClientConfig = cfg.TLS.Clone()
	}
	if cfg.Proxy != nil {
		transport.Proxy = http.ProxyURL(cfg.Proxy)
	}
	creds := credentials.NewStaticV4("", "", "")
	if cfg.Credentials != nil {
		creds = credentials.NewStaticV4(cfg.Credentials.AccessKey, cfg.Credentials.SecretKey, "")
	}
	mc, err := minio.New(host, &minio.Options{
		Creds: creds, Secure: secure, Region: cfg.Region, Transport: transport, MaxRetries: maxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: endpoint '%s': %w", ErrInvalidConfig, cfg.Endpoint, err)
	}
	return &Client{mc: mc}, nil
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
	exists, err := c.mc.BucketExists(ctx, bucketName)
	if err != nil {
		return nil, fmt.Errorf("failed to confirm existence of '%s' bucket: %w", bucketName, err)
	}
	if !exists {
		return nil, fmt.Errorf("bucket '%s' %w", bucketName, ErrBucketNotFound)
	}
	l := &Listing{}
	opts := minio.ListObjectsOptions{
		Recursive: true, Prefix: prefix,
		// Google's S3 interoperability API only speaks ListObjects V1.
		UseV1: s3utils.IsGoogleEndpoint(*c.mc.EndpointURL()),
	}
	for o := range c.mc.ListObjects(ctx, bucketName, opts) {
		if o.Err != nil {
			return nil, fmt.Errorf("listing objects from bucket '%s' failed: %w", bucketName, o.Err)
		}
		if len(l.Objects) == maxObjects {
			return nil, fmt.Errorf("%w: bucket '%s' lists more than %d objects", ErrTooLarge, bucketName, maxObjects)
		}
		obj := Object{Key: o.Key, ETag: o.ETag, Size: o.Size}
		if o.Key == artifact.SourceIgnoreFile {
			l.IgnoreFile = &obj
		}
		l.Objects = append(l.Objects, obj)
	}
	if strings.HasPrefix(artifact.SourceIgnoreFile, prefix) {
		return l, nil
	}
	info, err := c.mc.StatObject(ctx, bucketName, artifact.SourceIgnoreFile, minio.StatObjectOptions{})
	switch {
	case err == nil:
		l.IgnoreFile = &Object{Key: info.Key, ETag: info.ETag, Size: info.Size}
	case !isNotFound(err):
		return nil, fmt.Errorf("failed to get Etag for '%s' object: %w", artifact.SourceIgnoreFile, err)
	}
	return l, nil
}

// ReadIgnoreFile downloads the .sourceignore object obj (1 MiB at most).
func (c *Client) ReadIgnoreFile(ctx context.Context, bucketName string, obj Object) (string, error) {
	o, err := c.mc.GetObject(ctx, bucketName, obj.Key, minio.GetObjectOptions{})
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

// isNotFound reports S3's "no such key" answers (HEAD gets a bare 404).
func isNotFound(err error) bool {
	r := minio.ToErrorResponse(err)
	return r.Code == minio.NoSuchKey || r.StatusCode == http.StatusNotFound && r.Code != minio.NoSuchBucket
}
