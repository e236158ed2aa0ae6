package restconfig_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/restconfig"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// kubeconfig is a self-contained kubeconfig for https://remote:6443;
// change edits it first.
func kubeconfig(t *testing.T, change func(*clientcmdapi.Config)) []byte {
	t.Helper()
	return testenv.KubeConfig(t, &rest.Config{Host: "https://remote:6443", TLSClientConfig: rest.TLSClientConfig{
		CAData: []byte("ca"), CertData: []byte("cert"), KeyData: []byte("key"),
	}}, change)
}

func TestResolve(t *testing.T) {
	secret := func(name string, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps"}, Data: data}
	}
	reader := fake.NewClientBuilder().WithObjects(
		secret("value", map[string][]byte{"value": kubeconfig(t, nil)}),
		secret("value-yaml", map[string][]byte{"value.yaml": kubeconfig(t, nil)}),
		secret("custom", map[string][]byte{"cfg": kubeconfig(t, nil)}),
		secret("empty", nil),
		secret("exec", map[string][]byte{"value": kubeconfig(t, func(kc *clientcmdapi.Config) {
			kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "aws", APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}
		})}),
		secret("insecure", map[string][]byte{"value": kubeconfig(t, func(kc *clientcmdapi.Config) {
			kc.Clusters["remote"].InsecureSkipTLSVerify, kc.Clusters["remote"].CertificateAuthorityData = true, nil
		})}),
		secret("files", map[string][]byte{"value": kubeconfig(t, func(kc *clientcmdapi.Config) {
			kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{TokenFile: "/var/run/token"}
		})}),
		secret("ca-file", map[string][]byte{"value": kubeconfig(t, func(kc *clientcmdapi.Config) {
			kc.Clusters["remote"].CertificateAuthority, kc.Clusters["remote"].CertificateAuthorityData = "/etc/ca.crt", nil
		})}),
	).Build()
	local := &rest.Config{Host: "https://local:6443"}
	remote := func(name, key string) *meta.KubeConfigReference {
		return &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: name, Key: key}}
	}
	tests := []struct {
		name             string
		r                restconfig.Resolver
		sa               string
		kc               *meta.KubeConfigReference
		host, user, fail string
		stalls           bool
	}{
		{name: "the controller itself", host: "https://local:6443"},
		{name: "serviceAccountName", sa: "tenant", host: "https://local:6443", user: "system:serviceaccount:apps:tenant"},
		{name: "--default-service-account", r: restconfig.Resolver{DefaultServiceAccount: "default"}, host: "https://local:6443", user: "system:serviceaccount:apps:default"},
		{name: "serviceAccountName wins over the default", r: restconfig.Resolver{DefaultServiceAccount: "default"}, sa: "tenant", host: "https://local:6443", user: "system:serviceaccount:apps:tenant"},
		{name: "kubeConfig value", kc: remote("value", ""), host: "https://remote:6443"},
		{name: "kubeConfig value.yaml", kc: remote("value-yaml", ""), host: "https://remote:6443"},
		{name: "kubeConfig key", kc: remote("custom", "cfg"), host: "https://remote:6443"},
		{name: "kubeConfig with an account impersonates it remotely", kc: remote("value", ""), sa: "tenant", host: "https://remote:6443", user: "system:serviceaccount:apps:tenant"},
		{name: "missing Secret", kc: remote("gone", ""), fail: "could not get KubeConfig secret 'apps/gone'"},
		{name: "missing key", kc: remote("custom", "other"), fail: "KubeConfig secret 'apps/custom' does not contain a 'other' key with a kubeconfig"},
		{name: "no kubeconfig key", kc: remote("empty", ""), fail: "does not contain a 'value' or 'value.yaml' key"},
		{name: "exec refused", kc: remote("exec", ""), fail: "refused unless the controller runs with --insecure-kubeconfig-exec", stalls: true},
		{name: "exec allowed", r: restconfig.Resolver{InsecureKubeConfigExec: true}, kc: remote("exec", ""), host: "https://remote:6443"},
		{name: "insecure TLS refused", kc: remote("insecure", ""), fail: "refused unless the controller runs with --insecure-kubeconfig-tls", stalls: true},
		{name: "insecure TLS allowed", r: restconfig.Resolver{InsecureKubeConfigTLS: true}, kc: remote("insecure", ""), host: "https://remote:6443"},
		{name: "token file refused", kc: remote("files", ""), fail: "refers to files on the controller's disk", stalls: true},
		{name: "CA file refused", kc: remote("ca-file", ""), fail: "refers to a CA file on the controller's disk", stalls: true},
		{name: "missing ConfigMap", kc: &meta.KubeConfigReference{ConfigMapRef: &meta.LocalObjectReference{Name: "id"}}, fail: "could not get KubeConfig ConfigMap 'apps/id'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			r.Config, r.Reader = local, reader
			got, err := r.Resolve(context.Background(), restconfig.Request{Namespace: "apps", ServiceAccountName: tt.sa, KubeConfig: tt.kc})
			if tt.fail != "" {
				if err == nil || !strings.Contains(err.Error(), tt.fail) {
					t.Fatalf("err = %v, want %q", err, tt.fail)
				}
				if errs.IsStalling(err) != tt.stalls || (tt.stalls && errs.Reason(err, "") != restconfig.InvalidKubeConfigReason) {
					t.Errorf("err = %#v, stalling %v", err, errs.IsStalling(err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Config.Host != tt.host || got.User != tt.user || got.Config.Impersonate.UserName != tt.user || got.Remote != (tt.kc != nil) {
				t.Errorf("target = host %s user %q (impersonating %q) remote %v", got.Config.Host, got.User, got.Config.Impersonate.UserName, got.Remote)
			}
		})
	}
	if local.Impersonate.UserName != "" {
		t.Error("Resolve changed the controller's own config")
	}
}

// TestResolveWrapsRemoteTransports: RemoteWrap (the sharding fence) wraps
// the transport of a spec.kubeConfig cluster's config, and leaves the
// controller's own config (fenced already) alone.
func TestResolveWrapsRemoteTransports(t *testing.T) {
	reader := fake.NewClientBuilder().WithObjects(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "value", Namespace: "apps"}, Data: map[string][]byte{"value": kubeconfig(t, nil)},
	}).Build()
	var fenced []string
	r := restconfig.Resolver{Config: &rest.Config{Host: "https://local:6443"}, Reader: reader,
		RemoteWrap: func(next http.RoundTripper) http.RoundTripper {
			return roundTripper(func(req *http.Request) (*http.Response, error) {
				fenced = append(fenced, req.Method+" "+req.URL.Host)
				return next.RoundTrip(req)
			})
		}}
	for _, tc := range []struct {
		name string
		kc   *meta.KubeConfigReference
		want []string
	}{
		{name: "local", want: nil},
		{name: "remote", kc: &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: "value"}}, want: []string{"PATCH remote:6443"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fenced = nil
			target, err := r.Resolve(context.Background(), restconfig.Request{Namespace: "apps", KubeConfig: tc.kc})
			if err != nil {
				t.Fatal(err)
			}
			rt := roundTripper(func(*http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
			})
			var sent http.RoundTripper = rt
			if target.Config.WrapTransport != nil {
				sent = target.Config.WrapTransport(rt)
			}
			req, _ := http.NewRequest(http.MethodPatch, target.Config.Host+"/api/v1/namespaces/apps/configmaps/x", http.NoBody)
			resp, err := sent.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if !slices.Equal(fenced, tc.want) {
				t.Errorf("requests through RemoteWrap: %v, want %v", fenced, tc.want)
			}
		})
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
