package bucket

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// DefaultAWSEndpoint is where an aws Bucket without spec.endpoint goes, as
// in Flux.
const DefaultAWSEndpoint = "s3.amazonaws.com"

// LDAPConfig is spec.sts for the generic provider: MinIO's
// AssumeRoleWithLDAPIdentity, whose answer signs the S3 requests.
type LDAPConfig struct {
	// Endpoint is the STS URL (spec.sts.endpoint).
	Endpoint string
	// Username and Password are the LDAP credentials (spec.sts.secretRef);
	// both empty sends none, as Flux does without a Secret.
	Username, Password string
	// TLS replaces the system's TLS settings for the STS (spec.sts.certSecretRef).
	TLS *tls.Config
}

// s3Store is a Store on minio-go: the generic and aws providers.
type s3Store struct {
	mc *minio.Client
}

func newS3Store(cfg Config) (*s3Store, error) {
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
	mc, err := minio.New(host, &minio.Options{
		Creds: s3Credentials(cfg), Secure: secure, Region: cfg.Region, Transport: transport, MaxRetries: maxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: endpoint '%s': %w", ErrInvalidConfig, cfg.Endpoint, err)
	}
	return &s3Store{mc: mc}, nil
}

// s3Credentials picks what signs the requests: the static (or STS-issued)
// keys, else MinIO's LDAP STS, else nothing.
func s3Credentials(cfg Config) *credentials.Credentials {
	switch {
	case cfg.Credentials != nil:
		c := cfg.Credentials
		return credentials.NewStaticV4(c.AccessKey, c.SecretKey, c.SessionToken)
	case cfg.LDAP != nil:
		l := cfg.LDAP
		transport := http.DefaultTransport.(*http.Transport).Clone()
		if l.TLS != nil {
			transport.TLSClientConfig = l.TLS.Clone()
		}
		if cfg.Proxy != nil {
			transport.Proxy = http.ProxyURL(cfg.Proxy)
		}
		return credentials.New(&credentials.LDAPIdentity{
			Client: &http.Client{Transport: transport}, STSEndpoint: l.Endpoint,
			LDAPUsername: l.Username, LDAPPassword: l.Password,
		})
	default:
		return credentials.NewStaticV4("", "", "")
	}
}

func (s *s3Store) BucketExists(ctx context.Context, bucket string) (bool, error) {
	return s.mc.BucketExists(ctx, bucket)
}

func (s *s3Store) ListObjects(ctx context.Context, bucket, prefix string, visit func(Object) error) error {
	opts := minio.ListObjectsOptions{
		Recursive: true, Prefix: prefix,
		// Google's S3 interoperability API only speaks ListObjects V1.
		UseV1: s3utils.IsGoogleEndpoint(*s.mc.EndpointURL()),
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops minio-go's listing goroutine when visit fails
	for o := range s.mc.ListObjects(ctx, bucket, opts) {
		if o.Err != nil {
			return o.Err
		}
		if err := visit(Object{Key: o.Key, ETag: o.ETag, Size: o.Size}); err != nil {
			return err
		}
	}
	return nil
}

func (s *s3Store) StatObject(ctx context.Context, bucket, key string) (Object, error) {
	info, err := s.mc.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return Object{}, s3NotFound(err)
	}
	return Object{Key: info.Key, ETag: info.ETag, Size: info.Size}, nil
}

func (s *s3Store) GetObject(ctx context.Context, bucket, key string) (io.ReadCloser, Object, error) {
	o, err := s.mc.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, Object{}, s3NotFound(err)
	}
	info, err := o.Stat() // sends the GET; the body follows on Read
	if err != nil {
		o.Close()
		return nil, Object{}, s3NotFound(err)
	}
	return o, Object{Key: key, ETag: info.ETag, Size: info.Size}, nil
}

// s3NotFound turns S3's "no such key" answers (HEAD gets a bare 404) into
// ErrObjectNotFound.
func s3NotFound(err error) error {
	r := minio.ToErrorResponse(err)
	if r.Code == minio.NoSuchKey || r.StatusCode == http.StatusNotFound && r.Code != minio.NoSuchBucket {
		return fmt.Errorf("%w: %w", ErrObjectNotFound, err)
	}
	return err
}
