package release

import (
	"fmt"
	"io"
	"log/slog"
	"sync"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/kube"
	ri "helm.sh/helm/v4/pkg/release"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/weir-gitops/weir/api/meta"
)

// Options say where a release lives and how much history Helm keeps.
type Options struct {
	// Name of the release.
	Name string
	// Namespace the release's objects go to (spec.targetNamespace).
	Namespace string
	// StorageNamespace holds the release Secrets (spec.storageNamespace).
	StorageNamespace string
	// MaxHistory is spec.maxHistory; 0 keeps every revision.
	MaxHistory int
	// Logger receives the SDK's logs; discarded when nil.
	Logger *slog.Logger
	// UseHelm3Defaults is the feature gate of that name: client-side apply
	// and the legacy waiter unless the spec says otherwise.
	UseHelm3Defaults bool
	// AllowDNSLookups is the feature gate of that name: templates may
	// resolve host names.
	AllowDNSLookups bool
	// Factories, when set, shares what Helm's kube client learns about
	// the cluster between the clients of one identity; nil builds it
	// afresh for this client.
	Factories *Factories
	// ParkWaits runs installs and upgrades that can park their wait
	// (Parks) without Helm's waiter: the caller judges the release's
	// objects afterwards (parked.go).
	ParkWaits bool
}

// Client runs Helm actions for one release. Every release it writes to
// storage (the pending record, the final one) is recorded, so a failed
// action's release is known even when the SDK returns none.
type Client struct {
	opts    Options
	cfg     *action.Configuration
	written *recorder
	// factory is the shared factory the client was built on; nil
	// without Options.Factories.
	factory *sharedFactory
	// last is the newest revision the last Observe read.
	last *releasev1.Release
}

// Helm's kube client writes with the field manager named by a package
// variable; Flux sets it to its controller's name, so that drift
// detection's dry-run (the same manager) owns what Helm applied.
func init() { kube.ManagedFieldsManager = meta.HelmControllerManager }

// NewClient builds the SDK configuration for opts on the cluster of
// restConfig: Helm's kube client defaults to opts.Namespace, its storage is
// the Secret driver in opts.StorageNamespace.
func NewClient(restConfig *rest.Config, opts Options) (*Client, error) {
	var getter *Getter
	var kc *kube.Client
	var shared *sharedFactory
	if opts.Factories != nil {
		shared = opts.Factories.get(restConfig)
		getter, kc = shared.getter, &kube.Client{Factory: shared}
	} else {
		getter = NewGetter(restConfig, opts.Namespace)
		kc = kube.New(getter)
	}
	clientset, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return nil, fmt.Errorf("building Kubernetes client for Helm storage: %w", err)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	kc.Namespace = opts.Namespace
	kc.SetLogger(logger.Handler())

	secrets := newReleaseSecrets(clientset.CoreV1().Secrets(opts.StorageNamespace))
	secrets.SetLogger(logger.Handler())
	rec := &recorder{Driver: secrets}
	store := storage.Init(rec)
	store.MaxHistory = opts.MaxHistory
	store.SetLogger(logger.Handler())

	cfg := action.NewConfiguration(action.ConfigurationSetLogger(logger.Handler()))
	cfg.RESTClientGetter = getter
	cfg.KubeClient = kc
	cfg.Releases = store
	cfg.HookOutputFunc = func(_, _, _ string) io.Writer { return io.Discard }
	return &Client{opts: opts, cfg: cfg, written: rec, factory: shared}, nil
}

// Written returns the releases actions wrote to storage since the last
// call, oldest write first, and forgets them. A write replaces the record of
// one revision (pending, then deployed or failed; deployed, then
// superseded), so the last write of a revision is its state in storage.
func (c *Client) Written() []*releasev1.Release { return c.written.take() }

// recorder is a storage driver that remembers the releases written.
type recorder struct {
	driver.Driver
	mu      sync.Mutex
	written []*releasev1.Release
}

func (r *recorder) Create(key string, rls ri.Releaser) error {
	if err := r.Driver.Create(key, rls); err != nil {
		return err
	}
	r.remember(rls)
	return nil
}

func (r *recorder) Update(key string, rls ri.Releaser) error {
	if err := r.Driver.Update(key, rls); err != nil {
		return err
	}
	r.remember(rls)
	return nil
}

func (r *recorder) remember(rls ri.Releaser) {
	rel, err := toV1(rls)
	if err != nil || rel == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.written = append(r.written, rel)
}

func (r *recorder) take() []*releasev1.Release {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.written
	r.written = nil
	return out
}

// toV1 converts what the storage API returns into the v1 release type.
func toV1(rls ri.Releaser) (*releasev1.Release, error) {
	switch r := rls.(type) {
	case *releasev1.Release:
		return r, nil
	case releasev1.Release:
		return &r, nil
	case nil:
		return nil, nil
	default:
		return nil, fmt.Errorf("unsupported release type %T", rls)
	}
}
