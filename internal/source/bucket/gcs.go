package bucket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"cloud.google.com/go/storage"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
)

// SecretGCPServiceAccount is the key of a gcp Bucket's spec.secretRef
// holding a Google service account's JSON key, as Flux names it.
const SecretGCPServiceAccount = "serviceaccount"

// gcsScope is what the JSON key's tokens are asked for: reading objects.
const gcsScope = "https://www.googleapis.com/auth/devstorage.read_only"

// GCSConfig says how to reach Google Cloud Storage.
type GCSConfig struct {
	// Endpoint is spec.endpoint: Google's (storage.googleapis.com, the
	// default) or another host[:port] or URL speaking the JSON API under
	// /storage/v1/ (an emulator).
	Endpoint string
	// Insecure talks plain HTTP to a bare host[:port] Endpoint.
	Insecure bool
	// ServiceAccountKey is the JSON key of spec.secretRef; when nil,
	// Token gives the requests' bearer tokens.
	ServiceAccountKey []byte
	// Token is the cloud identity's token source (internal/auth/gcp).
	Token oauth2.TokenSource
	// Proxy, when set, carries every request, the key's token exchange
	// included.
	Proxy *url.URL
}

// GCSValidateSecret is Flux's check of a gcp Bucket's Secret.
func GCSValidateSecret(secretName string, data map[string][]byte) error {
	if _, ok := data[SecretGCPServiceAccount]; !ok {
		return fmt.Errorf("invalid '%s' secret data: required fields '%s'", secretName, SecretGCPServiceAccount)
	}
	return nil
}

// NewGCS returns a client for Google Cloud Storage; it makes no request
// (a JSON key's token is fetched with the first one).
func NewGCS(ctx context.Context, cfg GCSConfig) (*Client, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.Proxy != nil {
		base.Proxy = http.ProxyURL(cfg.Proxy)
	}
	ts := cfg.Token
	if cfg.ServiceAccountKey != nil {
		keyCtx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Transport: base})
		creds, err := google.CredentialsFromJSONWithType(keyCtx, cfg.ServiceAccountKey, google.ServiceAccount, gcsScope)
		if err != nil {
			return nil, fmt.Errorf("failed to read the '%s' service account key: %w", SecretGCPServiceAccount, keyError(err))
		}
		ts = creds.TokenSource
	}
	if ts == nil {
		return nil, errors.New("no GCP credentials: neither a service account key nor a token source")
	}
	opts := []option.ClientOption{option.WithHTTPClient(&http.Client{Transport: &oauth2.Transport{Source: ts, Base: base}})}
	endpoint, err := gcsEndpoint(cfg.Endpoint, cfg.Insecure)
	if err != nil {
		return nil, err
	}
	if endpoint != "" {
		opts = append(opts, option.WithEndpoint(endpoint))
	}
	c, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("failed to create GCS client: %w", err)
	}
	return NewClient(&gcsStore{c: c}), nil
}

// keyError keeps the JSON parser's error (which may quote the key's
// bytes) out of messages.
func keyError(err error) error {
	if strings.Contains(err.Error(), "private_key") || strings.Contains(err.Error(), "invalid character") {
		return errors.New("the key is not a service account JSON key")
	}
	return err
}

// gcsEndpoint is the JSON API base for spec.endpoint; empty for Google's.
func gcsEndpoint(endpoint string, insecure bool) (string, error) {
	e := strings.TrimSpace(endpoint)
	if e == "" || e == "storage.googleapis.com" || e == "https://storage.googleapis.com" {
		return "", nil
	}
	host, secure, err := endpointHost(e, insecure)
	if err != nil {
		return "", err
	}
	scheme := "https"
	if !secure {
		scheme = "http"
	}
	return scheme + "://" + host + "/storage/v1/", nil
}

// gcsStore is a Store on cloud.google.com/go/storage.
type gcsStore struct {
	c *storage.Client
}

func (s *gcsStore) BucketExists(ctx context.Context, bucket string) (bool, error) {
	_, err := s.c.Bucket(bucket).Attrs(ctx)
	if errors.Is(err, storage.ErrBucketNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (s *gcsStore) ListObjects(ctx context.Context, bucket, prefix string, visit func(Object) error) error {
	it := s.c.Bucket(bucket).Objects(ctx, &storage.Query{Prefix: prefix})
	for {
		attrs, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := visit(Object{Key: attrs.Name, ETag: attrs.Etag, Size: attrs.Size}); err != nil {
			return err
		}
	}
}

func (s *gcsStore) StatObject(ctx context.Context, bucket, key string) (Object, error) {
	attrs, err := s.c.Bucket(bucket).Object(key).Attrs(ctx)
	if errors.Is(err, storage.ErrObjectNotExist) {
		return Object{}, fmt.Errorf("%w: %w", ErrObjectNotFound, err)
	}
	if err != nil {
		return Object{}, err
	}
	return Object{Key: attrs.Name, ETag: attrs.Etag, Size: attrs.Size}, nil
}

// GetObject reads the generation it described, so content and ETag agree
// even when the object is replaced meanwhile.
func (s *gcsStore) GetObject(ctx context.Context, bucket, key string) (io.ReadCloser, Object, error) {
	h := s.c.Bucket(bucket).Object(key)
	attrs, err := h.Attrs(ctx)
	if err == nil {
		var r *storage.Reader
		if r, err = h.Generation(attrs.Generation).NewReader(ctx); err == nil {
			return r, Object{Key: key, ETag: attrs.Etag, Size: attrs.Size}, nil
		}
	}
	if errors.Is(err, storage.ErrObjectNotExist) {
		return nil, Object{}, fmt.Errorf("%w: %w", ErrObjectNotFound, err)
	}
	return nil, Object{}, err
}
