package restconfig

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// issued is a TokenRequest the fake API server answered.
type issued struct {
	serviceAccount string
	audiences      []string
}

// tokenServer is a fake client that answers TokenRequests with a token
// naming the ServiceAccount, and records them.
type tokenServer struct {
	mu     sync.Mutex
	issued []issued
}

func (s *tokenServer) client(objs ...client.Object) client.Client {
	return interceptor.NewClient(fake.NewClientBuilder().WithObjects(objs...).Build(), interceptor.Funcs{
		SubResourceCreate: func(_ context.Context, _ client.Client, _ string, obj, subObj client.Object, _ ...client.SubResourceCreateOption) error {
			req := subObj.(*authnv1.TokenRequest)
			s.mu.Lock()
			defer s.mu.Unlock()
			s.issued = append(s.issued, issued{obj.GetNamespace() + "/" + obj.GetName(), req.Spec.Audiences})
			req.Status.Token = "token-of-" + obj.GetNamespace() + "-" + obj.GetName()
			req.Status.ExpirationTimestamp = metav1.NewTime(time.Now().Add(time.Hour))
			return nil
		},
	})
}

func (s *tokenServer) requests() []issued {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]issued(nil), s.issued...)
}

func serviceAccount(ns, name string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func TestConfigMapGenericIdentityAndAudiences(t *testing.T) {
	// The controller's own account, as its mounted token names it.
	tokenFile := filepath.Join(t.TempDir(), "token")
	own, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "system:serviceaccount:weir-system:weir-controller"}).SignedString([]byte("k"))
	if err := os.WriteFile(tokenFile, []byte(own), 0o600); err != nil {
		t.Fatal(err)
	}
	saved := auth.ControllerTokenFile
	auth.ControllerTokenFile = tokenFile
	t.Cleanup(func() { auth.ControllerTokenFile = saved })

	tests := []struct {
		name       string
		settings   auth.Settings
		data       map[string]string
		wantSA     string
		wantAud    []string
		wantErr    string
		wantReason string
	}{
		{name: "controller identity, audience defaults to the address",
			data:   map[string]string{KeyAddress: "remote.example.com:6443"},
			wantSA: "weir-system/weir-controller", wantAud: []string{"remote.example.com:6443"}},
		{name: "named account, audiences one per line",
			settings: auth.Settings{ObjectLevel: true},
			data:     map[string]string{KeyServiceAccountName: "deployer", KeyAudiences: "a\n\n  b  \n"},
			wantSA:   "apps/deployer", wantAud: []string{"a", "b"}},
		{name: "lockdown default account when none is named",
			settings: auth.Settings{ObjectLevel: true, DefaultServiceAccount: "tenant-default"},
			wantSA:   "apps/tenant-default", wantAud: []string{"https://remote.example.com"}},
		{name: "named account with the gate off",
			data:    map[string]string{KeyServiceAccountName: "deployer"},
			wantErr: "KubeConfig ConfigMap 'apps/access': ObjectLevelWorkloadIdentity feature gate is not enabled", wantReason: meta.FeatureGateDisabledReason},
		{name: "named account that does not exist",
			settings: auth.Settings{ObjectLevel: true},
			data:     map[string]string{KeyServiceAccountName: "nobody"},
			wantErr:  "KubeConfig ConfigMap 'apps/access': failed to get service account 'apps/nobody'"},
		{name: "ca.crt that is not PEM",
			data:    map[string]string{KeyCA: "not a certificate"},
			wantErr: "KubeConfig ConfigMap 'apps/access': key 'ca.crt' holds no PEM certificate", wantReason: InvalidKubeConfigReason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := map[string]string{KeyProvider: ProviderGeneric, KeyAddress: "https://remote.example.com"}
			for k, v := range tt.data {
				data[k] = v
			}
			srv := &tokenServer{}
			kube := srv.client(serviceAccount("apps", "deployer"), serviceAccount("apps", "tenant-default"), serviceAccount("weir-system", "weir-controller"),
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "access"}, Data: data})
			settings := tt.settings
			settings.Client = kube
			r := &Resolver{Config: &rest.Config{Host: "https://local"}, Reader: kube, KubeConfigIdentity: &settings}
			target, err := r.Resolve(context.Background(), Request{Namespace: "apps",
				KubeConfig: &meta.KubeConfigReference{ConfigMapRef: &meta.LocalObjectReference{Name: "access"}}})
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				var stalling *errs.Stalling
				if isStalling := errors.As(err, &stalling); tt.wantReason != "" && (!isStalling || stalling.Reason != tt.wantReason) {
					t.Errorf("err %#v, want stalling with reason %s", err, tt.wantReason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := srv.requests()
			if len(got) != 1 || got[0].serviceAccount != tt.wantSA || strings.Join(got[0].audiences, ",") != strings.Join(tt.wantAud, ",") {
				t.Errorf("TokenRequests %+v, want one for %s with audiences %q", got, tt.wantSA, tt.wantAud)
			}
			if !target.Remote || target.Config.BearerToken != "" || strings.Contains(target.Config.String(), "token-of") {
				t.Errorf("config %s: the token must travel only in the transport", target.Config)
			}
		})
	}
}

// TestConfigMapTokenOnEveryRequestFromTheCache sends requests through the
// built config: each carries the ServiceAccount's token, one TokenRequest
// serves them all while it is fresh.
func TestConfigMapTokenOnEveryRequestFromTheCache(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
	}))
	t.Cleanup(api.Close)
	caPEM := string(pemCert(api.Certificate().Raw))
	srv := &tokenServer{}
	kube := srv.client(serviceAccount("apps", "deployer"), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "access"},
		Data:       map[string]string{KeyProvider: ProviderGeneric, KeyAddress: api.URL, KeyCA: caPEM, KeyServiceAccountName: "deployer"},
	})
	r := &Resolver{Reader: kube, KubeConfigIdentity: &auth.Settings{ObjectLevel: true, Client: kube, Cache: auth.NewCache(10, time.Hour)}}
	for range 2 {
		target, err := r.Resolve(context.Background(), Request{Namespace: "apps",
			KubeConfig: &meta.KubeConfigReference{ConfigMapRef: &meta.LocalObjectReference{Name: "access"}}})
		if err != nil {
			t.Fatal(err)
		}
		hc, err := rest.HTTPClientFor(target.Config)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			resp, err := hc.Get(api.URL + "/api")
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
		}
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("%d TokenRequests for two resolves and four requests, want 1", n)
	}
	for _, h := range seen {
		if h != "Bearer token-of-apps-deployer" {
			t.Errorf("Authorization %q", h)
		}
	}
	if len(seen) != 4 {
		t.Errorf("%d requests reached the server, want 4", len(seen))
	}
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
