package ociregistry

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Media types of a Helm chart stored in a registry, as `helm push` writes
// it.
const (
	HelmChartConfigMediaType = "application/vnd.cncf.helm.config.v1+json"
	HelmChartLayerMediaType  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// Media type and annotation of a cosign signature layer (internal/source/oci has
// them too, but imports this package in its tests).
const (
	cosignSignatureMediaType  = "application/vnd.dev.cosign.simplesigning.v1+json"
	cosignSignatureAnnotation = "dev.cosignproject.cosign/signature"
)

// PushChart pushes a packaged chart (the .tgz bytes) as repo:tag the way
// `helm push` does, and returns the manifest digest. Helm writes "+" in a
// version as "_" in the tag; the caller passes the tag.
func (r *Registry) PushChart(t testing.TB, repo, tag string, archive []byte) string {
	t.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, HelmChartConfigMediaType)
	img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(archive, HelmChartLayerMediaType)})
	if err != nil {
		t.Fatal(err)
	}
	return r.Push(t, repo, tag, img)
}

// Push writes img as repo:tag with the registry's credentials and returns
// its digest.
func (r *Registry) Push(t testing.TB, repo, tag string, img v1.Image) string {
	t.Helper()
	ref, err := name.NewTag(r.Host()+"/"+repo+":"+tag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remote.WithAuth(r.auth)); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// CosignKey signs the way `cosign sign --key` does, with ECDSA P-256.
type CosignKey struct{ key *ecdsa.PrivateKey }

// NewCosignKey generates a key pair.
func NewCosignKey(t testing.TB) *CosignKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &CosignKey{key: key}
}

// PublicPEM is the public key as cosign.pub holds it.
func (k *CosignKey) PublicPEM(t testing.TB) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&k.key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// Sign pushes the signature image of digest to repo:sha256-<hex>.sig: one
// layer holding cosign's simple signing payload, annotated with the base64
// ASN.1 ECDSA signature of the payload's SHA-256.
func (k *CosignKey) Sign(t testing.TB, r *Registry, repo, digest string) {
	t.Helper()
	payload, err := json.Marshal(map[string]any{
		"critical": map[string]any{
			"identity": map[string]string{"docker-reference": r.Host() + "/" + repo},
			"image":    map[string]string{"docker-manifest-digest": digest},
			"type":     "cosign container image signature",
		},
		"optional": nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(payload)
	sig, err := ecdsa.SignASN1(rand.Reader, k.key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mutate.Addendum{
		Layer:       static.NewLayer(payload, cosignSignatureMediaType),
		Annotations: map[string]string{cosignSignatureAnnotation: base64.StdEncoding.EncodeToString(sig)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Push(t, repo, signatureTag(digest), img)
}

// signatureTag is cosign's tag for the signature of digest: sha256-<hex>.sig.
func signatureTag(digest string) string { return strings.Replace(digest, ":", "-", 1) + ".sig" }
