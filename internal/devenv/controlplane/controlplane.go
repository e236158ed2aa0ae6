package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// NodeName is the name of the single kwok node.
const NodeName = "weir-node"

// kwokNodeAnnotation marks the nodes kwok manages.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// Options configures Start.
type Options struct {
	// BinDir holds etcd, kube-apiserver, kube-controller-manager,
	// kube-scheduler, kwok and kwok-stages/. Default: DefaultBinDir().
	BinDir string
	// Dir receives certificates, etcd data, logs and the kubeconfig.
	// A new temporary directory when empty; removed by Stop only if created.
	Dir string
	// WithoutNode skips kube-controller-manager, kube-scheduler and kwok:
	// an API server alone, for tests that only need storage and validation.
	WithoutNode bool
	// StartTimeout bounds the wait for each component (default 60s).
	StartTimeout time.Duration
	// AuditPolicy, when set, is the API server's audit policy (YAML): the
	// events it selects are written as JSON lines to AuditLogPath.
	AuditPolicy string
}

// ControlPlane is a running local control plane.
type ControlPlane struct {
	dir        string
	removeDir  bool
	pki        *pki
	apiURL     string
	kubeconfig string
	procs      []*process
}

// Start launches the control plane and returns when the API server answers
// /readyz and, unless WithoutNode, the kwok node is Ready.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	if opts.BinDir == "" {
		if opts.BinDir, err = DefaultBinDir(); err != nil {
			return nil, err
		}
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 60 * time.Second
	}
	if err := checkBinaries(opts.BinDir, opts.WithoutNode); err != nil {
		return nil, err
	}
	cp := &ControlPlane{dir: opts.Dir}
	if cp.dir == "" {
		if cp.dir, err = os.MkdirTemp("", "weir-controlplane-"); err != nil {
			return nil, fmt.Errorf("creating control plane directory: %w", err)
		}
		cp.removeDir = true
	} else if err := os.MkdirAll(cp.dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating control plane directory: %w", err)
	}
	defer func() {
		if err != nil {
			cp.Stop()
		}
	}()
	if cp.pki, err = newPKI(cp.dir); err != nil {
		return nil, err
	}
	etcdURL, err := cp.startEtcd(opts)
	if err != nil {
		return nil, err
	}
	if err := cp.startAPIServer(opts, etcdURL); err != nil {
		return nil, err
	}
	if opts.WithoutNode {
		return cp, nil
	}
	if err := cp.startNodeComponents(ctx, opts); err != nil {
		return nil, err
	}
	return cp, nil
}

// DefaultBinDir finds bin/controlplane of the weir checkout that contains the
// working directory, or $WEIR_CONTROLPLANE_BIN when set.
func DefaultBinDir() (string, error) {
	if dir := os.Getenv("WEIR_CONTROLPLANE_BIN"); dir != "" {
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding working directory: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.HasPrefix(string(data), "module github.com/weir-gitops/weir\n") {
			return filepath.Join(dir, "bin", "controlplane"), nil
		}
		if filepath.Dir(dir) == dir {
			return "", errors.New("control plane binaries not found: run `make controlplane` in the weir checkout or set WEIR_CONTROLPLANE_BIN")
		}
	}
}

func checkBinaries(dir string, apiOnly bool) error {
	names := []string{"etcd", "kube-apiserver"}
	if !apiOnly {
		names = append(names, "kube-controller-manager", "kube-scheduler", "kwok", "kwok-stages")
	}
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			return fmt.Errorf("control plane binary %s missing in %s (run `make controlplane`): %w", n, dir, err)
		}
	}
	return nil
}

func (cp *ControlPlane) startEtcd(opts Options) (string, error) {
	clientPort, err := freePort()
	if err != nil {
		return "", err
	}
	peerPort, err := freePort()
	if err != nil {
		return "", err
	}
	clientURL := "http://" + hostPort(clientPort)
	peerURL := "http://" + hostPort(peerPort)
	p, err := cp.start(opts, "etcd", []string{
		"--name=weir",
		"--data-dir=" + filepath.Join(cp.dir, "etcd"),
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=weir=" + peerURL,
		"--heartbeat-interval=10",
		"--election-timeout=100",
		"--unsafe-no-fsync",
		"--log-level=warn",
	}, nil)
	if err != nil {
		return "", err
	}
	return clientURL, waitFor(p, opts.StartTimeout, func() error {
		return httpOK(http.DefaultClient, clientURL+"/health")
	})
}

func (cp *ControlPlane) startAPIServer(opts Options, etcdURL string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	cp.apiURL = "https://" + hostPort(port)
	audit, err := cp.auditArgs(opts)
	if err != nil {
		return err
	}
	p, err := cp.start(opts, "kube-apiserver", append([]string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + cp.dir,
		"--tls-cert-file=" + cp.pki.ServerCert,
		"--tls-private-key-file=" + cp.pki.ServerKey,
		"--client-ca-file=" + cp.pki.CAFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + cp.pki.SAPub,
		"--service-account-signing-key-file=" + cp.pki.SAKey,
		"--service-cluster-ip-range=10.0.0.0/16",
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		"--endpoint-reconciler-type=none",
		// The node's server (kwok's, serving pods/log) is verified with
		// the control plane's own CA, and reached at the node's address.
		"--kubelet-certificate-authority=" + cp.pki.CAFile,
		"--kubelet-preferred-address-types=InternalIP",
	}, audit...), nil)
	if err != nil {
		return err
	}
	if err := cp.writeKubeconfig(); err != nil {
		return err
	}
	client, err := cp.adminHTTPClient()
	if err != nil {
		return err
	}
	return waitFor(p, opts.StartTimeout, func() error {
		return httpOK(client, cp.apiURL+"/readyz")
	})
}

func (cp *ControlPlane) startNodeComponents(ctx context.Context, opts Options) error {
	kc := cp.kubeconfig
	if _, err := cp.start(opts, "kube-controller-manager", []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--secure-port=0",
		"--leader-elect=false",
		"--controllers=*",
		"--service-account-private-key-file=" + cp.pki.SAKey,
		"--root-ca-file=" + cp.pki.CAFile,
		"--use-service-account-credentials=false",
		"--cluster-cidr=10.244.0.0/16",
	}, nil); err != nil {
		return err
	}
	if _, err := cp.start(opts, "kube-scheduler", []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--leader-elect=false",
	}, nil); err != nil {
		return err
	}
	stages, err := cp.kwokStages(opts.BinDir)
	if err != nil {
		return err
	}
	home := filepath.Join(cp.dir, "kwok-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("creating kwok home: %w", err)
	}
	// kwok's server plays the kubelet's: the API server proxies pods/log
	// to the node's address and port, served over TLS with the API
	// server's own certificate (issued for 127.0.0.1).
	nodePort, err := freePort()
	if err != nil {
		return err
	}
	kwok, err := cp.start(opts, "kwok", []string{
		"--kubeconfig=" + kc,
		"--config=" + stages,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
		"--node-lease-duration-seconds=40",
		"--cidr=10.244.0.0/16",
		"--node-ip=127.0.0.1",
		"--node-port=" + strconv.Itoa(nodePort),
		"--server-address=" + hostPort(nodePort),
		"--tls-cert-file=" + cp.pki.ServerCert,
		"--tls-private-key-file=" + cp.pki.ServerKey,
	}, []string{"HOME=" + home})
	if err != nil {
		return err
	}
	return cp.createNode(ctx, kwok, opts.StartTimeout)
}

// PodLogFile is the log every container on the kwok node shows: what a
// test appends to it is read by pods/log, and followed.
func (cp *ControlPlane) PodLogFile() string {
	return filepath.Join(cp.dir, "pod-logs", "container.log")
}

// AppendPodLog adds line to PodLogFile in the CRI log format the
// kubelet's log reader parses: every container shows it next.
func (cp *ControlPlane) AppendPodLog(line string) error {
	f, err := os.OpenFile(cp.PodLogFile(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("opening the pod log: %w", err)
	}
	_, err = f.WriteString(time.Now().UTC().Format(time.RFC3339Nano) + " stdout F " + strings.TrimRight(line, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the pod log: %w", err)
	}
	return nil
}

// podLogs is kwok's ClusterLogs document: every container of every Pod
// logs PodLogFile, followed.
func (cp *ControlPlane) podLogs() (string, error) {
	if err := os.MkdirAll(filepath.Dir(cp.PodLogFile()), 0o700); err != nil {
		return "", fmt.Errorf("creating the pod log directory: %w", err)
	}
	if err := os.WriteFile(cp.PodLogFile(), nil, 0o600); err != nil {
		return "", fmt.Errorf("creating the pod log: %w", err)
	}
	return `apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: weir-pod-logs
spec:
  selector: {}
  logs:
  - containers: []
    logsFile: ` + strconv.Quote(cp.PodLogFile()) + `
    follow: true
`, nil
}

// kwokStages concatenates the Stage documents kwok needs, and the
// ClusterLogs of podLogs, into one file.
func (cp *ControlPlane) kwokStages(binDir string) (string, error) {
	files, err := filepath.Glob(filepath.Join(binDir, "kwok-stages", "*.yaml"))
	if err != nil || len(files) == 0 {
		return "", fmt.Errorf("no kwok stages in %s", filepath.Join(binDir, "kwok-stages"))
	}
	var docs []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("reading kwok stage: %w", err)
		}
		docs = append(docs, string(data))
	}
	logs, err := cp.podLogs()
	if err != nil {
		return "", err
	}
	docs = append(docs, logs)
	out := filepath.Join(cp.dir, "kwok-stages.yaml")
	if err := os.WriteFile(out, []byte(strings.Join(docs, "\n---\n")), 0o600); err != nil {
		return "", fmt.Errorf("writing kwok stages: %w", err)
	}
	return out, nil
}

func (cp *ControlPlane) createNode(ctx context.Context, kwok *process, timeout time.Duration) error {
	cs, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        NodeName,
			Annotations: map[string]string{kwokNodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				"kubernetes.io/hostname": NodeName, "kubernetes.io/os": "linux",
				"kubernetes.io/arch": "amd64", "type": "kwok",
			},
		},
		Status: corev1.NodeStatus{
			Capacity:    nodeResources(),
			Allocatable: nodeResources(),
		},
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating node %s: %w", NodeName, err)
	}
	return waitFor(kwok, timeout, func() error {
		n, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("node %s not Ready", NodeName)
	})
}

func nodeResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("2000"),
	}
}

func (cp *ControlPlane) start(opts Options, name string, args, env []string) (*process, error) {
	p, err := startProcess(cp.dir, name, filepath.Join(opts.BinDir, name), args, env)
	if err != nil {
		return nil, err
	}
	cp.procs = append(cp.procs, p)
	return p, nil
}

// Stop ends every process the control plane started, newest first, by PID,
// and removes its directory if Start created it. It is safe to call twice.
func (cp *ControlPlane) Stop() {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		cp.procs[i].stop(10 * time.Second)
	}
	cp.procs = nil
	if cp.removeDir && cp.dir != "" {
		_ = os.RemoveAll(cp.dir)
		cp.dir = ""
	}
}

// PIDs returns the process IDs of the running components by name.
func (cp *ControlPlane) PIDs() map[string]int {
	pids := map[string]int{}
	for _, p := range cp.procs {
		if p.running() {
			pids[p.name] = p.PID()
		}
	}
	return pids
}

// Dir is where certificates, logs and the kubeconfig live.
func (cp *ControlPlane) Dir() string { return cp.dir }

// KubeconfigPath is the admin kubeconfig file.
func (cp *ControlPlane) KubeconfigPath() string { return cp.kubeconfig }

// AuditLogPath is the API server's audit log (JSON lines), written when
// Options.AuditPolicy was set.
func (cp *ControlPlane) AuditLogPath() string { return filepath.Join(cp.dir, "audit.log") }

// auditArgs are the API server's audit flags for opts.AuditPolicy (none
// without one), its policy written into the control plane's directory.
func (cp *ControlPlane) auditArgs(opts Options) ([]string, error) {
	if opts.AuditPolicy == "" {
		return nil, nil
	}
	policy := filepath.Join(cp.dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(opts.AuditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("writing the audit policy: %w", err)
	}
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + cp.AuditLogPath(),
		"--audit-log-format=json", "--audit-log-mode=blocking"}, nil
}

// APIServerURL is the https:// address of the API server.
func (cp *ControlPlane) APIServerURL() string { return cp.apiURL }

// RESTConfig returns admin credentials for the API server. They are given
// as data, not file names: client-go caches TLS transports process-wide by
// file name, so a second control plane started in the same directory (weir
// dev run twice in one process) would be dialled with the first one's CA.
func (cp *ControlPlane) RESTConfig() *rest.Config {
	tls := rest.TLSClientConfig{CAFile: cp.pki.CAFile, CertFile: cp.pki.AdminCert, KeyFile: cp.pki.AdminKey}
	ca, errCA := os.ReadFile(cp.pki.CAFile)
	cert, errCert := os.ReadFile(cp.pki.AdminCert)
	key, errKey := os.ReadFile(cp.pki.AdminKey)
	if errCA == nil && errCert == nil && errKey == nil {
		tls = rest.TLSClientConfig{CAData: ca, CertData: cert, KeyData: key}
	}
	return &rest.Config{Host: cp.apiURL, TLSClientConfig: tls, QPS: 200, Burst: 400}
}

// writeKubeconfig writes the admin kubeconfig with the credentials inline,
// for the reason RESTConfig gives, and so that it can be copied elsewhere.
func (cp *ControlPlane) writeKubeconfig() error {
	rc := cp.RESTConfig()
	if len(rc.CAData) == 0 {
		return fmt.Errorf("writing kubeconfig: cannot read the admin credentials in %s", cp.dir)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["weir-local"] = &clientcmdapi.Cluster{Server: cp.apiURL, CertificateAuthorityData: rc.CAData}
	cfg.AuthInfos["weir-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: rc.CertData, ClientKeyData: rc.KeyData}
	cfg.Contexts["weir-local"] = &clientcmdapi.Context{Cluster: "weir-local", AuthInfo: "weir-admin", Namespace: "default"}
	cfg.CurrentContext = "weir-local"
	cp.kubeconfig = filepath.Join(cp.dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, cp.kubeconfig); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}

func (cp *ControlPlane) adminHTTPClient() (*http.Client, error) {
	caPEM, err := os.ReadFile(cp.pki.CAFile)
	if err != nil {
		return nil, fmt.Errorf("reading CA: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cert, err := tls.LoadX509KeyPair(cp.pki.AdminCert, cp.pki.AdminKey)
	if err != nil {
		return nil, fmt.Errorf("loading admin certificate: %w", err)
	}
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		}},
	}, nil
}

func httpOK(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
