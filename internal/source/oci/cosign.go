package oci

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Cosign's classic signature layout, as `cosign sign --key` writes it.
const (
	// CosignKeySuffix marks the public keys in a verification Secret.
	CosignKeySuffix = ".pub"
	// CosignSignatureMediaType is the media type of each signature layer.
	CosignSignatureMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	// CosignSignatureAnnotation holds a layer's base64 signature.
	CosignSignatureAnnotation = "dev.cosignproject.cosign/signature"
	// CosignSignatureType is the critical.type of a signature payload.
	CosignSignatureType = "cosign container image signature"
	// cosignTagSuffix ends the tag of the signature image of a digest.
	cosignTagSuffix = ".sig"
	// maxSignatureLayers and maxPayloadSize bound the work one signature
	// image can ask for.
	maxSignatureLayers = 100
	maxPayloadSize     = 1 << 20
)

// CosignKeys are the trusted public keys of a verification Secret.
type CosignKeys struct {
	keys []cosignKey
}

type cosignKey struct {
	name string
	pub  *ecdsa.PublicKey
}

// NewCosignKeys reads every *.pub entry of a verification Secret as a
// PEM-encoded ECDSA public key (cosign's default key type). At least one is
// required; other entries are ignored.
func NewCosignKeys(data map[string][]byte) (*CosignKeys, error) {
	ks := &CosignKeys{}
	for _, name := range slices.Sorted(maps.Keys(data)) {
		if !strings.HasSuffix(name, CosignKeySuffix) {
			continue
		}
		pub, err := parseECDSAPublicKey(data[name])
		if err != nil {
			return nil, invalidf("verification secret key %q: %v", name, err)
		}
		ks.keys = append(ks.keys, cosignKey{name: name, pub: pub})
	}
	if len(ks.keys) == 0 {
		return nil, invalidf("verification secret has no %s public keys", CosignKeySuffix)
	}
	return ks, nil
}

func parseECDSAPublicKey(data []byte) (*ecdsa.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("not a PEM-encoded public key")
	}
	if block.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("PEM block %q is not a PUBLIC KEY", block.Type)
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing public key: %w", err)
	}
	pub, ok := key.(*ecdsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%T keys are not supported, only ECDSA", key)
	}
	return pub, nil
}

// Names lists the keys' Secret entries, in order.
func (k *CosignKeys) Names() []string {
	names := make([]string, len(k.keys))
	for i, key := range k.keys {
		names[i] = key.name
	}
	return names
}

// verify returns the name of the key that made sig over payload's SHA-256.
func (k *CosignKeys) verify(payload, sig []byte) (string, bool) {
	sum := sha256.Sum256(payload)
	for _, key := range k.keys {
		if ecdsa.VerifyASN1(key.pub, sum[:], sig) {
			return key.name, true
		}
	}
	return "", false
}

// simpleSigning is the part of cosign's signature payload that is checked.
type simpleSigning struct {
	Critical struct {
		Image struct {
			DockerManifestDigest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
}

// SignatureTag is the tag cosign stores the signatures of digest under:
// sha256:<hex> becomes sha256-<hex>.sig.
func SignatureTag(digest string) string {
	return strings.Replace(digest, ":", "-", 1) + cosignTagSuffix
}

func (r *registry) VerifyCosign(res *Resolved, keys *CosignKeys) (string, error) {
	sigRef := r.repo.Tag(SignatureTag(res.Digest))
	desc, err := remote.Get(sigRef, r.opts...)
	if err != nil {
		err = classify(r.ctx, err, "signature tag '"+sigRef.TagStr()+"'", r.repo.String())
		if errors.Is(err, ErrNotFound) {
			return "", r.noSignature(res, err.Error())
		}
		return "", err
	}
	img, err := desc.Image()
	if err != nil {
		return "", r.noSignature(res, "signature image: "+err.Error())
	}
	manifest, err := img.Manifest()
	if err != nil {
		return "", r.noSignature(res, "signature manifest: "+err.Error())
	}
	var reasons []string
	for i, layer := range manifest.Layers {
		if i == maxSignatureLayers {
			reasons = append(reasons, fmt.Sprintf("stopped after %d signatures", maxSignatureLayers))
			break
		}
		name, err := r.checkSignature(res, layer, keys)
		if err == nil {
			return name, nil
		}
		reasons = append(reasons, fmt.Sprintf("signature %d: %v", i+1, err))
	}
	if len(reasons) == 0 {
		reasons = append(reasons, "the signature image has no layers")
	}
	return "", r.noSignature(res, strings.Join(reasons, "; "))
}

// checkSignature verifies one signature layer against res and keys.
func (r *registry) checkSignature(res *Resolved, layer v1.Descriptor, keys *CosignKeys) (string, error) {
	if string(layer.MediaType) != CosignSignatureMediaType {
		return "", fmt.Errorf("media type %s is not %s", layer.MediaType, CosignSignatureMediaType)
	}
	sig, err := base64.StdEncoding.DecodeString(layer.Annotations[CosignSignatureAnnotation])
	if err != nil || len(sig) == 0 {
		return "", fmt.Errorf("annotation %s is missing or not base64", CosignSignatureAnnotation)
	}
	if layer.Size > maxPayloadSize {
		return "", fmt.Errorf("payload of %d bytes is larger than %d", layer.Size, maxPayloadSize)
	}
	payload, err := r.fetchPayload(layer)
	if err != nil {
		return "", err
	}
	var ss simpleSigning
	if err := json.Unmarshal(payload, &ss); err != nil {
		return "", fmt.Errorf("payload is not a simple signing document: %w", err)
	}
	if ss.Critical.Type != CosignSignatureType {
		return "", fmt.Errorf("payload type %q is not %q", ss.Critical.Type, CosignSignatureType)
	}
	if ss.Critical.Image.DockerManifestDigest != res.Digest {
		return "", fmt.Errorf("payload names digest %s", ss.Critical.Image.DockerManifestDigest)
	}
	name, ok := keys.verify(payload, sig)
	if !ok {
		return "", errors.New("not made by any trusted key")
	}
	return name, nil
}

// fetchPayload downloads a signature layer's blob, checked against its
// digest and declared size.
func (r *registry) fetchPayload(layer v1.Descriptor) ([]byte, error) {
	blob, err := remote.Layer(r.repo.Digest(layer.Digest.String()), r.opts...)
	if err != nil {
		return nil, err
	}
	rc, err := blob.Compressed()
	if err != nil {
		return nil, classify(r.ctx, err, "signature layer '"+layer.Digest.String()+"'", r.repo.String())
	}
	defer rc.Close()
	payload, err := io.ReadAll(io.LimitReader(rc, layer.Size+1))
	if err != nil {
		return nil, fmt.Errorf("reading payload: %w", err)
	}
	if int64(len(payload)) != layer.Size {
		return nil, fmt.Errorf("payload has %d bytes, the manifest declares %d", len(payload), layer.Size)
	}
	return payload, nil
}

func (r *registry) noSignature(res *Resolved, detail string) error {
	return &kindError{kind: ErrVerification,
		err: fmt.Errorf("no matching signatures were found for '%s': %s", res.Ref, detail)}
}
