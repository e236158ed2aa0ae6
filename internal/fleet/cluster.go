package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

// API groups of the Flux kinds the loader follows.
const (
	kustomizeGroup = "kustomize.toolkit.fluxcd.io"
	helmGroup      = "helm.toolkit.fluxcd.io"
	sourceGroup    = "source.toolkit.fluxcd.io"
)

// The root bootstrap creates when the repository holds none: `flux
// bootstrap` and `weir dev` name both the Kustomization and its
// GitRepository flux-system, in namespace flux-system.
const (
	implicitName      = "flux-system"
	implicitNamespace = "flux-system"
)

// clusterLoad is the state of loading one cluster.
type clusterLoad struct {
	*loader
	c *Cluster
	// queue holds the Kustomizations not yet built, in discovery order.
	queue []*Node
	// rootSource is the Key of the root's source: this repository.
	rootSource string
}

// loadCluster builds the graph of one entry point.
func (l *loader) loadCluster(ctx context.Context, entry string) (*Cluster, error) {
	if !isDir(l.abs(entry)) {
		return nil, fmt.Errorf("entry point %s: not a directory", entry)
	}
	c := &Cluster{Entry: entry, Sources: map[string]*Source{}, Applied: map[string][]*Node{}, objects: map[string]*unstructured.Unstructured{}}
	cl := &clusterLoad{loader: l, c: c}
	root, err := cl.rootNode(entry)
	if err != nil {
		return nil, err
	}
	c.Root = root
	if err := cl.assume(); err != nil {
		return nil, err
	}
	cl.add(root)
	for len(cl.queue) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cl.buildBatch(ctx, cl.nextBatch())
	}
	return c, nil
}

// nextBatch takes the queued Kustomizations whose inputs the graph has
// produced (their source, their substituteFrom objects); when none is
// ready, the first one, which then fails as it would in the cluster.
func (cl *clusterLoad) nextBatch() []*Node {
	var batch, rest []*Node
	for _, n := range cl.queue {
		if cl.ready(n) {
			batch = append(batch, n)
		} else {
			rest = append(rest, n)
		}
	}
	if len(batch) == 0 {
		batch, rest = rest[:1], rest[1:]
	}
	cl.queue = rest
	return batch
}

// buildBatch builds the batch's local Kustomizations concurrently, then
// adds what they yield to the cluster in batch order, so the graph does
// not depend on which build finished first.
func (cl *clusterLoad) buildBatch(ctx context.Context, batch []*Node) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, goruntime.GOMAXPROCS(0))
	for _, n := range batch {
		if n.SourceDir = cl.sourceDir(n.Source); n.SourceDir == "" {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			cl.build(ctx, n)
		}()
	}
	wg.Wait()
	for _, n := range batch {
		for i, o := range n.Objects {
			cl.register(ctx, n, o, n.Origins[i])
		}
	}
}

// ready reports whether n's source and its non-optional substituteFrom
// objects are in the graph.
func (cl *clusterLoad) ready(n *Node) bool {
	if n.Source != "" && cl.c.Sources[n.Source] == nil && !n.Implicit {
		return false
	}
	ks := n.Kustomization
	if ks.Spec.PostBuild == nil {
		return true
	}
	for _, ref := range ks.Spec.PostBuild.SubstituteFrom {
		if !ref.Optional && cl.c.objects[KeyOf(ref.Kind, ks.Namespace, ref.Name)] == nil {
			return false
		}
	}
	return true
}

// assume adds the objects of Options.Assume.
func (cl *clusterLoad) assume() error {
	for _, a := range cl.opts.Assume {
		parts := strings.Split(a, "/")
		if len(parts) != 3 || parts[0] == "" || parts[2] == "" {
			return fmt.Errorf("assumed object %q: want Kind/namespace/name", a)
		}
		u := &unstructured.Unstructured{}
		u.SetKind(parts[0])
		u.SetNamespace(parts[1])
		u.SetName(parts[2])
		if sourceKinds[parts[0]] {
			u.SetAPIVersion(sourceGroup + "/v1")
			cl.c.Sources[Key(u)] = &Source{Object: u, Assumed: true}
			continue
		}
		u.SetAPIVersion("v1")
		cl.c.objects[Key(u)] = u
	}
	return nil
}

// sourceKinds are the kinds of source.toolkit.fluxcd.io.
var sourceKinds = map[string]bool{"GitRepository": true, "OCIRepository": true, "Bucket": true,
	"HelmRepository": true, "HelmChart": true, "ExternalArtifact": true}

// rootNode is the entry point's root sync, or the implicit one.
func (cl *clusterLoad) rootNode(entry string) (*Node, error) {
	if rs, ok := cl.roots[entry]; ok {
		u := &unstructured.Unstructured{}
		if err := cl.decodeNode(rs.doc.node, u); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", rs.File, rs.Line, err)
		}
		n, err := NewNode(u, rs.Position, nil)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", rs.File, rs.Line, err)
		}
		cl.addRootSource(n)
		return n, nil
	}
	ks := &kustomizev1.Kustomization{}
	ks.APIVersion, ks.Kind = kustomizev1.GroupVersion.String(), kustomizev1.KustomizationKind
	ks.Name, ks.Namespace = implicitName, implicitNamespace
	ks.Spec.Path = "./" + entry
	ks.Spec.Prune = true
	ks.Spec.SourceRef = kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: implicitName}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ks)
	if err != nil {
		return nil, err
	}
	n, err := NewNode(&unstructured.Unstructured{Object: obj}, Position{File: entry}, nil)
	if err != nil {
		return nil, err
	}
	n.Implicit = true
	cl.addRootSource(n)
	return n, nil
}

// addRootSource records the root's source as this repository: an
// implicit one until the graph yields the object itself.
func (cl *clusterLoad) addRootSource(root *Node) {
	ref := root.Kustomization.Spec.SourceRef
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(sourceGroup + "/v1")
	u.SetKind(ref.Kind)
	u.SetNamespace(root.Object.GetNamespace())
	if ref.Namespace != "" {
		u.SetNamespace(ref.Namespace)
	}
	u.SetName(ref.Name)
	src := &Source{Object: u, Dir: cl.dir, Implicit: true, Position: root.Position}
	cl.c.Sources[Key(u)] = src
	cl.rootSource = Key(u)
}

// decodeNode turns a parsed YAML document into an object.
func (cl *clusterLoad) decodeNode(doc *kyaml.Node, u *unstructured.Unstructured) error {
	var m map[string]any
	if err := doc.Decode(&m); err != nil {
		return err
	}
	u.Object = m
	return nil
}

// NewNode decodes a Kustomization or HelmRelease object into a node at
// pos, applied by parent (nil for a root).
func NewNode(u *unstructured.Unstructured, pos Position, parent *Node) (*Node, error) {
	n := &Node{Object: u, Position: pos, Parent: parent}
	switch u.GetKind() {
	case kustomizev1.KustomizationKind:
		ks := &kustomizev1.Kustomization{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ks); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", Key(u), err)
		}
		n.Kustomization = ks
		n.Source = sourceKey(ks.Spec.SourceRef.Kind, ks.Namespace, ks.Spec.SourceRef.Namespace, ks.Spec.SourceRef.Name)
	case helmv2.HelmReleaseKind:
		hr := &helmv2.HelmRelease{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, hr); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", Key(u), err)
		}
		n.HelmRelease = hr
		n.Source = helmSource(hr)
	default:
		return nil, fmt.Errorf("%s is not a Kustomization or HelmRelease", Key(u))
	}
	return n, nil
}

// sourceKey is the Key of a source reference made from namespace ns.
func sourceKey(kind, ns, refNS, name string) string {
	if refNS != "" {
		ns = refNS
	}
	return KeyOf(kind, ns, name)
}

// helmSource is the Key of the source a HelmRelease's chart comes from.
func helmSource(hr *helmv2.HelmRelease) string {
	switch {
	case hr.Spec.ChartRef != nil:
		r := hr.Spec.ChartRef
		return sourceKey(r.Kind, hr.Namespace, r.Namespace, r.Name)
	case hr.Spec.Chart != nil:
		r := hr.Spec.Chart.Spec.SourceRef
		return sourceKey(r.Kind, hr.Namespace, r.Namespace, r.Name)
	}
	return ""
}

// add puts a node in the cluster and queues it when it is to be built.
func (cl *clusterLoad) add(n *Node) {
	cl.c.Nodes = append(cl.c.Nodes, n)
	if n.Kustomization != nil {
		cl.queue = append(cl.queue, n)
	}
}

func (l *loader) abs(rel string) string { return filepath.Join(l.dir, filepath.FromSlash(rel)) }

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
