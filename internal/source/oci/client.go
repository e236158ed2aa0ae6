package oci

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/version"
)

// Client opens registry repositories. The reconciler holds one; tests of
// the reconciler use the real implementation against an in-process
// registry.
type Client interface {
	// Remote parses url (oci://host/repository) and returns a handle whose
	// operations all run under ctx. A bad URL is ErrInvalidConfig.
	Remote(ctx context.Context, url string, opts Options) (Remote, error)
}

// Remote is one repository in a registry.
type Remote interface {
	// Resolve turns ref into a revision with at most one manifest HEAD (and
	// a tag listing for semver); nothing is downloaded.
	Resolve(ref Reference) (*Resolved, error)
	// Pull fetches res's manifest and selected layer. Extracted, the layer
	// is unpacked into the directory dst; copied, its compressed bytes are
	// written to the new file dst.
	Pull(res *Resolved, dst string, opts PullOptions) (*Pulled, error)
	// VerifyCosign looks for a cosign signature of res's digest made by one
	// of keys and returns the name of the key that verified it.
	VerifyCosign(res *Resolved, keys *CosignKeys) (string, error)
}

// Options says how to reach the registry.
type Options struct {
	// Keychain supplies credentials; nil means anonymous.
	Keychain authn.Keychain
	// TLS, when set, replaces the default TLS configuration (see
	// NewTLSConfig).
	TLS *tls.Config
	// Proxy, when set, is used instead of the HTTP(S)_PROXY environment.
	Proxy *url.URL
	// Insecure allows plain HTTP and, when TLS is nil, skips certificate
	// verification (Flux's behaviour for spec.insecure).
	Insecure bool
}

// PullOptions says which layer to take and what to do with it.
type PullOptions struct {
	// MediaType selects the first layer with this media type; empty means
	// the first layer.
	MediaType string
	// Copy stores the compressed layer as is instead of extracting it.
	Copy bool
	// MaxSize bounds the extracted content (see artifact.Untar: 0 means its
	// default, negative unbounded) or, when copying, the blob.
	MaxSize int64
}

// Resolved is a reference resolved to a manifest digest.
type Resolved struct {
	// Tag is the tag resolved (the chosen one for semver); empty for a
	// digest reference.
	Tag string
	// Digest is the manifest digest, sha256:<hex>.
	Digest string
	// Revision is Flux's revision string: <tag>@<digest> or <digest>.
	Revision string
	// Ref is the full reference, host/repository:tag or @digest, as
	// messages show it.
	Ref string
}

// Hex is the hexadecimal part of the digest, which names artifact files.
func (r *Resolved) Hex() string {
	_, hex, _ := strings.Cut(r.Digest, ":")
	return hex
}

// Pulled describes what Pull fetched.
type Pulled struct {
	// Annotations are the manifest's annotations (source, revision,
	// created…), for the artifact's metadata.
	Annotations map[string]string
	// MediaType, Digest and Size describe the selected layer.
	MediaType string
	Digest    string
	Size      int64
}

// Standard annotations `flux push artifact` writes on the manifest.
const (
	SourceAnnotation   = "org.opencontainers.image.source"
	RevisionAnnotation = "org.opencontainers.image.revision"
	CreatedAnnotation  = "org.opencontainers.image.created"
)

// NewClient returns the go-containerregistry implementation of Client.
func NewClient() Client { return ggcrClient{} }

type ggcrClient struct{}

func (ggcrClient) Remote(ctx context.Context, rawURL string, o Options) (Remote, error) {
	repo, err := ParseURL(rawURL, o.Insecure)
	if err != nil {
		return nil, err
	}
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(NewTransport(o)),
		remote.WithUserAgent("weir/" + version.Version),
	}
	if o.Keychain != nil {
		opts = append(opts, remote.WithAuthFromKeychain(o.Keychain))
	}
	// One puller per Remote: the /v2/ ping and any token exchange happen
	// once for all of a reconcile's requests.
	puller, err := remote.NewPuller(opts...)
	if err != nil {
		return nil, fmt.Errorf("configuring registry client: %w", err)
	}
	return &registry{ctx: ctx, repo: repo, opts: append(opts, remote.Reuse(puller))}, nil
}

// NewTransport is go-containerregistry's default transport with the TLS
// and proxy settings of o.
func NewTransport(o Options) http.RoundTripper {
	t := remote.DefaultTransport.(*http.Transport).Clone()
	switch {
	case o.TLS != nil:
		t.TLSClientConfig = o.TLS.Clone()
	case o.Insecure:
		// spec.insecure without a certificate Secret: Flux's documented
		// exception for self-signed registries, kept for compatibility.
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // see doc.go, Credentials and transport
	}
	if o.Proxy != nil {
		t.Proxy = http.ProxyURL(o.Proxy)
	}
	return t
}

// registry implements Remote with go-containerregistry.
type registry struct {
	ctx  context.Context
	repo name.Repository
	opts []remote.Option
}

func (r *registry) Resolve(ref Reference) (*Resolved, error) {
	t, err := ref.resolve()
	if err != nil {
		return nil, err
	}
	switch t.kind {
	case kindDigest:
		return &Resolved{Digest: t.value, Revision: revision("", t.value), Ref: r.repo.Digest(t.value).String()}, nil
	case kindSemVer:
		tags, err := remote.List(r.repo, r.opts...)
		if err != nil {
			return nil, &TagError{Err: classify(r.ctx, err, "", r.repo.String())}
		}
		tag, ok := pickSemVer(tags, t)
		if !ok {
			what := fmt.Sprintf("tag matching semver '%s'", t.value)
			if t.filter != nil {
				what += fmt.Sprintf(" and semverFilter '%s'", t.filter)
			}
			return nil, &TagError{Err: &NotFoundError{What: what, Repository: r.repo.String()}}
		}
		return r.head(tag)
	default:
		return r.head(t.value)
	}
}

// head resolves a tag with a manifest HEAD, or a GET when the registry
// does not answer HEAD usefully.
func (r *registry) head(tag string) (*Resolved, error) {
	ref := r.repo.Tag(tag)
	what := "tag '" + tag + "'"
	desc, err := remote.Head(ref, r.opts...)
	if err != nil {
		cerr := classify(r.ctx, err, what, r.repo.String())
		for _, s := range []error{ErrAuth, ErrNotFound, ErrUnreachable, ErrTLS} {
			if errors.Is(cerr, s) {
				return nil, cerr
			}
		}
		got, gerr := remote.Get(ref, r.opts...)
		if gerr != nil {
			return nil, classify(r.ctx, gerr, what, r.repo.String())
		}
		desc = &got.Descriptor
	}
	digest := desc.Digest.String()
	return &Resolved{Tag: tag, Digest: digest, Revision: revision(tag, digest), Ref: ref.String()}, nil
}

func (r *registry) Pull(res *Resolved, dst string, opts PullOptions) (*Pulled, error) {
	ref := r.repo.Digest(res.Digest)
	what := "manifest '" + res.Digest + "'"
	desc, err := remote.Get(ref, r.opts...)
	if err != nil {
		return nil, classify(r.ctx, err, what, r.repo.String())
	}
	img, err := desc.Image()
	if err != nil {
		return nil, classify(r.ctx, err, what, r.repo.String())
	}
	manifest, err := img.Manifest()
	if err != nil {
		return nil, layerf("failed to parse artifact manifest: %w", err)
	}
	layer, err := selectLayer(manifest.Layers, opts.MediaType)
	if err != nil {
		return nil, err
	}
	pulled := &Pulled{
		Annotations: maps.Clone(manifest.Annotations),
		MediaType:   string(layer.MediaType), Digest: layer.Digest.String(), Size: layer.Size,
	}
	if opts.Copy && opts.MaxSize > 0 && layer.Size > opts.MaxSize {
		return nil, layerf("layer %s of %d bytes exceeds the limit of %d bytes", layer.Digest, layer.Size, opts.MaxSize)
	}
	blob, err := remote.Layer(r.repo.Digest(layer.Digest.String()), r.opts...)
	if err != nil {
		return nil, classify(r.ctx, err, "layer '"+layer.Digest.String()+"'", r.repo.String())
	}
	rc, err := blob.Compressed()
	if err != nil {
		return nil, classify(r.ctx, err, "layer '"+layer.Digest.String()+"'", r.repo.String())
	}
	defer rc.Close()
	body := &countingReader{r: rc}
	if opts.Copy {
		err = r.copyLayer(body, dst, layer)
	} else {
		err = r.extractLayer(body, dst, layer, opts.MaxSize)
	}
	if err != nil {
		return nil, err
	}
	return pulled, nil
}

// selectLayer picks the first layer, or the first with mediaType.
func selectLayer(layers []v1.Descriptor, mediaType string) (v1.Descriptor, error) {
	if len(layers) == 0 {
		return v1.Descriptor{}, layerf("no layers found in artifact")
	}
	if mediaType == "" {
		return layers[0], nil
	}
	for _, l := range layers {
		if string(l.MediaType) == mediaType {
			return l, nil
		}
	}
	return v1.Descriptor{}, layerf("failed to find layer with media type '%s' in artifact", mediaType)
}

// extractLayer unpacks the layer into dir, then reads what the tar reader
// left so that the blob's digest is checked.
func (r *registry) extractLayer(body *countingReader, dir string, layer v1.Descriptor, maxSize int64) error {
	if err := artifact.Untar(body, dir, maxSize); err != nil {
		if body.err != nil {
			return r.blobError(body.err, layer)
		}
		return layerf("failed to extract layer contents from artifact: %w", err)
	}
	return r.drain(body, layer)
}

// copyLayer writes the compressed layer to the new file dst.
func (r *registry) copyLayer(body *countingReader, dst string, layer v1.Descriptor) error {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return layerf("failed to create file to copy layer to: %w", err)
	}
	_, err = io.Copy(f, io.LimitReader(body, layer.Size))
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		if body.err != nil {
			return r.blobError(body.err, layer)
		}
		return layerf("failed to copy layer from artifact: %w", err)
	}
	return r.drain(body, layer)
}

// drain reads the rest of the blob, up to its declared size, and the end
// of stream, where go-containerregistry compares the digest.
func (r *registry) drain(body *countingReader, layer v1.Descriptor) error {
	if _, err := io.Copy(io.Discard, io.LimitReader(body, layer.Size-body.n+1)); err != nil {
		return r.blobError(err, layer)
	}
	if body.n != layer.Size {
		return fmt.Errorf("layer %s: read %d bytes, the manifest declares %d", layer.Digest, body.n, layer.Size)
	}
	return nil
}

func (r *registry) blobError(err error, layer v1.Descriptor) error {
	return classify(r.ctx, fmt.Errorf("reading layer %s: %w", layer.Digest, err), "layer '"+layer.Digest.String()+"'", r.repo.String())
}

// countingReader remembers how much was read and the first read error, to
// tell a network or digest failure from a bad archive.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && !errors.Is(err, io.EOF) && c.err == nil {
		c.err = err
	}
	return n, err
}
