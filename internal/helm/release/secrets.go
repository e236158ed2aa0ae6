package release

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	ri "helm.sh/helm/v4/pkg/release"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// releaseSecrets is Helm's Secret storage driver with the writes done
// here: the Secrets it writes are byte for byte the format Helm writes
// (type helm.sh/release.v1, data "release" the base64 of the gzipped JSON
// release, base64-encoded once more by the API, Helm's labels), read
// back by Helm's own driver. Helm builds a new gzip writer at best
// compression, about 1 MiB of compressor state, for every write, four
// for an install; here the writers are pooled, which was the largest
// share of what a burst of releases allocated (design 0038).
type releaseSecrets struct {
	*driver.Secrets
	impl typedcorev1.SecretInterface
	// now is the clock of the createdAt and modifiedAt labels.
	now func() time.Time
}

func newReleaseSecrets(impl typedcorev1.SecretInterface) *releaseSecrets {
	return &releaseSecrets{Secrets: driver.NewSecrets(impl), impl: impl, now: time.Now}
}

// Create writes the Secret of a new revision; driver.ErrReleaseExists
// when it is there already.
func (s *releaseSecrets) Create(key string, rls ri.Releaser) error {
	rel, err := toV1(rls)
	if err != nil {
		return err
	}
	obj, err := releaseSecret(key, rel, "createdAt", s.now())
	if err != nil {
		return fmt.Errorf("create: failed to encode release %q: %w", rel.Name, err)
	}
	if _, err := s.impl.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return driver.ErrReleaseExists
		}
		return fmt.Errorf("create: failed to create: %w", err)
	}
	return nil
}

// Update replaces the Secret of a revision.
func (s *releaseSecrets) Update(key string, rls ri.Releaser) error {
	rel, err := toV1(rls)
	if err != nil {
		return err
	}
	obj, err := releaseSecret(key, rel, "modifiedAt", s.now())
	if err != nil {
		return fmt.Errorf("update: failed to encode release %q: %w", rel.Name, err)
	}
	if _, err := s.impl.Update(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update: failed to update: %w", err)
	}
	return nil
}

// releaseSecret is the Secret Helm stores rel in, labelled in Helm's order:
// the time label stamp (createdAt on create, modifiedAt on update), the
// release's own labels over it, then name, owner, status and version.
func releaseSecret(key string, rel *releasev1.Release, stamp string, at time.Time) (*corev1.Secret, error) {
	if rel == nil {
		return nil, fmt.Errorf("no release to store")
	}
	data, err := encodeRelease(rel)
	if err != nil {
		return nil, err
	}
	labels := make(map[string]string, len(rel.Labels)+5)
	labels[stamp] = strconv.FormatInt(at.Unix(), 10)
	for k, v := range rel.Labels {
		labels[k] = v
	}
	labels["name"] = rel.Name
	labels["owner"] = "helm"
	labels["status"] = rel.Info.Status.String()
	labels["version"] = strconv.Itoa(rel.Version)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key, Labels: labels},
		Type:       "helm.sh/release.v1",
		Data:       map[string][]byte{"release": data},
	}, nil
}

// gzipWriters are gzip writers at best compression, as Helm compresses.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestCompression)
	return w
}}

// encodeRelease is the base64 of the gzipped JSON of rel, as Helm's
// driver encodes it.
func encodeRelease(rel *releasev1.Release) ([]byte, error) {
	raw, err := json.Marshal(rel)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	out := make([]byte, base64.StdEncoding.EncodedLen(buf.Len()))
	base64.StdEncoding.Encode(out, buf.Bytes())
	return out, nil
}
