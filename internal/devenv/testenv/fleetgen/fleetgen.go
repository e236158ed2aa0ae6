package fleetgen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Repository describes what Write wrote.
type Repository struct {
	// Paths are the directories of the Kustomizations, repository-relative,
	// the root's first: what a plain kustomize build would be run on.
	Paths []string
	// Objects is the number of objects the application Kustomizations
	// hold in total.
	Objects int
}

// Write writes a repository of kustomizations Kustomizations besides the
// root (at least 2), whose applications hold objects objects in total
// (ConfigMaps, Deployments and Services in turn), into dir.
func Write(dir string, kustomizations, objects int) (*Repository, error) {
	if kustomizations < 2 {
		return nil, fmt.Errorf("want at least 2 Kustomizations, got %d", kustomizations)
	}
	apps := kustomizations - 1
	files := map[string]string{
		"clusters/dev/sync.yaml":         kustomization("flux-system", "./clusters/dev", nil, false),
		"clusters/dev/cluster-vars.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-vars\n  namespace: flux-system\ndata:\n  cluster_name: dev\n",
		"clusters/dev/infrastructure.yaml": kustomization("infrastructure", "./infrastructure", []string{"flux-system"}, false) +
			"  wait: true\n",
		"infrastructure/kustomization.yaml": kustFile("namespace.yaml"),
		"infrastructure/namespace.yaml":     "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n",
	}
	repo := &Repository{Paths: []string{"clusters/dev", "infrastructure"}}
	root := []string{"sync.yaml", "cluster-vars.yaml", "infrastructure.yaml"}
	for i := range apps {
		name := fmt.Sprintf("app-%03d", i)
		root = append(root, name+".yaml")
		files["clusters/dev/"+name+".yaml"] = kustomization(name, "./apps/"+name, []string{"infrastructure"}, true) + "  wait: true\n"
		n := objects / apps
		if i < objects%apps {
			n++
		}
		var res []string
		for j := range n {
			file := fmt.Sprintf("obj-%03d.yaml", j)
			res = append(res, file)
			files["apps/"+name+"/"+file] = object(j, fmt.Sprintf("%s-%03d", name, j))
		}
		files["apps/"+name+"/kustomization.yaml"] = kustFile(res...)
		repo.Paths = append(repo.Paths, "apps/"+name)
		repo.Objects += n
	}
	files["clusters/dev/kustomization.yaml"] = kustFile(root...)
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	return repo, nil
}

func kustomization(name, path string, deps []string, substitutes bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: %s\n  namespace: flux-system\nspec:\n"+
		"  interval: 10m\n  path: %s\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n", name, path)
	if len(deps) > 0 {
		b.WriteString("  dependsOn:\n")
		for _, d := range deps {
			fmt.Fprintf(&b, "    - name: %s\n", d)
		}
	}
	if substitutes {
		b.WriteString("  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: cluster-vars\n")
	}
	return b.String()
}

func kustFile(resources ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n")
	for _, r := range resources {
		fmt.Fprintf(&b, "  - %s\n", r)
	}
	return b.String()
}

// object is the j-th object of an application: a ConfigMap, Deployment or
// Service in turn, each using ${cluster_name}.
func object(j int, name string) string {
	switch j % 3 {
	case 0:
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: apps\ndata:\n  cluster: ${cluster_name}\n  greeting: hello\n", name)
	case 1:
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  namespace: apps
  labels:
    app: %[1]s
    cluster: ${cluster_name}
spec:
  replicas: ${replicas:=1}
  selector:
    matchLabels:
      app: %[1]s
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      containers:
        - name: app
          image: ghcr.io/stefanprodan/podinfo:6.7.0
          ports:
            - containerPort: 9898
`, name)
	}
	return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: %[1]s\n  namespace: apps\nspec:\n  selector:\n    app: %[1]s\n  ports:\n    - port: 80\n      targetPort: 9898\n", name)
}
