package clideps

import (
	"path/filepath"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestRESTConfigRate: --kube-api-qps and --kube-api-burst reach the
// client's config; unset, they are the flux CLI's defaults.
func TestRESTConfigRate(t *testing.T) {
	kubeconfig := writeKubeconfig(t, "")
	for _, tt := range []struct {
		qps       float32
		burst     int
		wantQPS   float32
		wantBurst int
	}{
		{0, 0, DefaultQPS, DefaultBurst},
		{10, 20, 10, 20},
	} {
		d := &Deps{Kube: flags(kubeconfig, "", ""), QPS: tt.qps, Burst: tt.burst}
		cfg, err := d.RESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.QPS != tt.wantQPS || cfg.Burst != tt.wantBurst {
			t.Errorf("qps %v burst %d: config has %v, %d; want %v, %d", tt.qps, tt.burst, cfg.QPS, cfg.Burst, tt.wantQPS, tt.wantBurst)
		}
	}
}

// TestNamespace: -n, else the context's namespace with
// --ns-follows-kube-context, else the default -n carries.
func TestNamespace(t *testing.T) {
	for _, tt := range []struct {
		name      string
		contextNS string
		context   string // --context
		follows   bool
		nsFlag    string // -n given, "" when not
		want      string
	}{
		{"default", "team-a", "", false, "", "flux-system"},
		{"follows the context", "team-a", "", true, "", "team-a"},
		{"-n wins", "team-a", "", true, "apps", "apps"},
		{"context without namespace", "", "", true, "", "flux-system"},
		{"--context chooses the context", "team-a", "other", true, "", "team-b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ns := "flux-system"
			if tt.nsFlag != "" {
				ns = tt.nsFlag
			}
			d := &Deps{Kube: flags(writeKubeconfig(t, tt.contextNS), tt.context, ns), NamespaceFollowsContext: tt.follows,
				NamespaceChanged: func() bool { return tt.nsFlag != "" }}
			if got := d.Namespace(); got != tt.want {
				t.Errorf("Namespace() = %q, want %q", got, tt.want)
			}
		})
	}
}

func flags(kubeconfig, context, ns string) *genericclioptions.ConfigFlags {
	f := genericclioptions.NewConfigFlags(false)
	f.KubeConfig, f.Context, f.Namespace = &kubeconfig, &context, &ns
	return f
}

// writeKubeconfig writes a kubeconfig whose current context "main" has
// namespace ns, and whose context "other" has team-b.
func writeKubeconfig(t *testing.T, ns string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443"}
	cfg.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["main"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "user", Namespace: ns}
	cfg.Contexts["other"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "user", Namespace: "team-b"}
	cfg.CurrentContext = "main"
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p); err != nil {
		t.Fatal(err)
	}
	return p
}
