package release

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"sync"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func storedRelease(version int, status rcommon.Status, labels map[string]string) *releasev1.Release {
	return &releasev1.Release{
		Name: "podinfo", Namespace: "apps", Version: version, Labels: labels,
		Info:     &releasev1.Info{Status: status, Description: "Install complete"},
		Chart:    &chartv2.Chart{Metadata: &chartv2.Metadata{Name: "podinfo", Version: "6.7.0", APIVersion: "v2"}, Templates: []*common.File{{Name: "templates/cm.yaml", Data: []byte("kind: ConfigMap")}}},
		Config:   map[string]any{"replicaCount": float64(2)},
		Manifest: "---\nkind: ConfigMap\nmetadata:\n  name: podinfo\n",
	}
}

// TestReleaseSecretsWriteWhatHelmWrites writes each revision once through
// Helm's own driver and once through releaseSecrets and compares the
// Secrets: same type, labels (the time stamp aside), same JSON once
// decoded, and Helm's driver reads ours back as the release written.
func TestReleaseSecretsWriteWhatHelmWrites(t *testing.T) {
	tests := []struct {
		name   string
		rel    *releasev1.Release
		update bool
		stamp  string
	}{
		{"create a pending install", storedRelease(1, rcommon.StatusPendingInstall, nil), false, "createdAt"},
		{"update to deployed", storedRelease(1, rcommon.StatusDeployed, nil), true, "modifiedAt"},
		{"custom labels kept", storedRelease(2, rcommon.StatusDeployed, map[string]string{"team": "web"}), false, "createdAt"},
		{"superseded on update", storedRelease(3, rcommon.StatusSuperseded, map[string]string{"team": "web"}), true, "modifiedAt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := "sh.helm.release.v1.podinfo.v1"
			helmSet, ourSet := fake.NewClientset(), fake.NewClientset()
			helm := driver.NewSecrets(helmSet.CoreV1().Secrets("apps"))
			ours := newReleaseSecrets(ourSet.CoreV1().Secrets("apps"))
			write := func(d driver.Driver) error {
				if tt.update {
					if err := d.Create(key, storedRelease(tt.rel.Version, rcommon.StatusPendingInstall, nil)); err != nil {
						return err
					}
					return d.Update(key, tt.rel)
				}
				return d.Create(key, tt.rel)
			}
			if err := write(helm); err != nil {
				t.Fatalf("Helm's driver: %v", err)
			}
			if err := write(ours); err != nil {
				t.Fatalf("releaseSecrets: %v", err)
			}
			want := secret(t, helmSet, key)
			got := secret(t, ourSet, key)
			if got.Type != want.Type {
				t.Errorf("type %q, want %q", got.Type, want.Type)
			}
			if _, ok := got.Labels[tt.stamp]; !ok {
				t.Errorf("labels %v lack %s", got.Labels, tt.stamp)
			}
			got.Labels[tt.stamp], want.Labels[tt.stamp] = "", ""
			if !reflect.DeepEqual(got.Labels, want.Labels) {
				t.Errorf("labels %v, want Helm's %v", got.Labels, want.Labels)
			}
			if g, w := gunzip(t, got.Data["release"]), gunzip(t, want.Data["release"]); !bytes.Equal(g, w) {
				t.Errorf("release JSON differs from Helm's:\n%s\n%s", g, w)
			}
			read, err := driver.NewSecrets(ourSet.CoreV1().Secrets("apps")).Get(key)
			if err != nil {
				t.Fatalf("Helm's driver reading ours: %v", err)
			}
			rel, _ := toV1(read)
			if rel.Info.Status != tt.rel.Info.Status || rel.Manifest != tt.rel.Manifest {
				t.Errorf("read back %s %q, want %s %q", rel.Info.Status, rel.Manifest, tt.rel.Info.Status, tt.rel.Manifest)
			}
			if len(tt.rel.Labels) > 0 && !reflect.DeepEqual(rel.Labels, tt.rel.Labels) {
				t.Errorf("read back labels %v, want %v", rel.Labels, tt.rel.Labels)
			}
		})
	}
}

func TestReleaseSecretsCreateExisting(t *testing.T) {
	ours := newReleaseSecrets(fake.NewClientset().CoreV1().Secrets("apps"))
	key := "sh.helm.release.v1.podinfo.v1"
	if err := ours.Create(key, storedRelease(1, rcommon.StatusDeployed, nil)); err != nil {
		t.Fatal(err)
	}
	if err := ours.Create(key, storedRelease(1, rcommon.StatusDeployed, nil)); !errors.Is(err, driver.ErrReleaseExists) {
		t.Errorf("second create: %v, want ErrReleaseExists", err)
	}
}

// TestEncodeReleaseConcurrently shares the pooled writers between writers
// at once (run with -race): every output decodes to its own release.
func TestEncodeReleaseConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			rel := storedRelease(i+1, rcommon.StatusDeployed, nil)
			data, err := encodeRelease(rel)
			if err != nil {
				t.Error(err)
				return
			}
			var back releasev1.Release
			if err := json.Unmarshal(gunzip(t, data), &back); err != nil || back.Version != i+1 {
				t.Errorf("revision %d decoded as %d (%v)", i+1, back.Version, err)
			}
		})
	}
	wg.Wait()
}

func secret(t *testing.T, set *fake.Clientset, key string) *corev1.Secret {
	t.Helper()
	s, err := set.CoreV1().Secrets("apps").Get(context.Background(), key, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func gunzip(t *testing.T, data []byte) []byte {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(string(data))
	if err != nil {
		t.Fatal(err)
	}
	r, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
