package release

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Getter hands Helm's kube client the cluster of one rest.Config, with the
// release namespace as its default namespace. It is the seam for
// impersonation and spec.kubeConfig: give it the rest.Config those build.
type Getter struct {
	config    *rest.Config
	namespace string

	once      sync.Once
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.RESTMapper
	err       error
}

var _ genericclioptions.RESTClientGetter = (*Getter)(nil)

// NewGetter returns a getter for cfg whose default namespace is namespace.
// Discovery and the REST mapper are built once and cached in memory, so one
// getter serves one reconciliation, or every reconciliation of one
// identity through Factories.
func NewGetter(cfg *rest.Config, namespace string) *Getter {
	return &Getter{config: rest.CopyConfig(cfg), namespace: namespace}
}

// ToRESTConfig returns a copy of the config.
func (g *Getter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.config), nil }

// ToDiscoveryClient returns the cached discovery client.
func (g *Getter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	g.init()
	return g.discovery, g.err
}

// ToRESTMapper returns controller-runtime's dynamic mapper: it discovers
// a group when first asked for it and again when a kind is missing, so
// CRDs a chart (or anyone) installs are found by later steps, also by a
// getter shared between reconciliations.
func (g *Getter) ToRESTMapper() (meta.RESTMapper, error) {
	g.init()
	return g.mapper, g.err
}

// ToRawKubeConfigLoader returns a client config that yields only the
// namespace; Helm reads nothing else from it once ToRESTConfig is set.
func (g *Getter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(), &clientcmd.ConfigOverrides{
		Context: clientcmdapi.Context{Namespace: g.namespace},
	})
}

func (g *Getter) init() {
	g.once.Do(func() {
		dc, err := discovery.NewDiscoveryClientForConfig(g.config)
		if err != nil {
			g.err = err
			return
		}
		g.discovery = memory.NewMemCacheClient(dc)
		httpClient, err := rest.HTTPClientFor(g.config)
		if err != nil {
			g.err = err
			return
		}
		g.mapper, g.err = apiutil.NewDynamicRESTMapper(g.config, httpClient)
	})
}
