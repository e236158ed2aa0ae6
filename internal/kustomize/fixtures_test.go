package kustomize

// podinfoTree is a podinfo-style repository: a base, two components, and dev
// and prod overlays.
var podinfoTree = map[string]string{
	"apps/base/podinfo/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: podinfo
resources:
  - namespace.yaml
  - deployment.yaml
  - service.yaml
  - hpa.yaml
configMapGenerator:
  - name: podinfo-config
    literals:
      - PODINFO_UI_COLOR=#34577c
`,
	"apps/base/podinfo/namespace.yaml": `apiVersion: v1
kind: Namespace
metadata:
  name: podinfo
`,
	"apps/base/podinfo/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: podinfo
  labels:
    app.kubernetes.io/name: podinfo
    app.kubernetes.io/part-of: podinfo
spec:
  minReadySeconds: 3
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      app.kubernetes.io/name: podinfo
  template:
    metadata:
      labels:
        app.kubernetes.io/name: podinfo
    spec:
      containers:
        - name: podinfod
          image: ghcr.io/stefanprodan/podinfo:6.5.0
          command: ["./podinfo", "--port=9898", "--level=info"]
          envFrom:
            - configMapRef:
                name: podinfo-config
          ports:
            - name: http
              containerPort: 9898
              protocol: TCP
          resources:
            requests:
              cpu: 100m
              memory: 64Mi
`,
	"apps/base/podinfo/service.yaml": `apiVersion: v1
kind: Service
metadata:
  name: podinfo
  labels:
    app.kubernetes.io/name: podinfo
spec:
  type: ClusterIP
  selector:
    app.kubernetes.io/name: podinfo
  ports:
    - name: http
      port: 9898
      targetPort: http
`,
	"apps/base/podinfo/hpa.yaml": `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: podinfo
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: podinfo
  minReplicas: 2
  maxReplicas: 4
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: 99
`,
	"apps/components/tls/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
patches:
  - target:
      kind: Deployment
      name: podinfo
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/command/-
        value: --secure-port=9899
`,
	"apps/components/ingress/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources:
  - ingress.yaml
`,
	"apps/components/ingress/ingress.yaml": `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: podinfo
spec:
  rules:
    - host: podinfo.example.com
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: podinfo
                port:
                  name: http
`,
	"apps/dev/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../base/podinfo
patches:
  - path: hpa-patch.yaml
images:
  - name: ghcr.io/stefanprodan/podinfo
    newTag: 6.5.1
`,
	"apps/dev/hpa-patch.yaml": `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: podinfo
spec:
  minReplicas: 1
  maxReplicas: 1
`,
	"apps/prod/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: podinfo-prod
resources:
  - ../base/podinfo
components:
  - ../components/tls
patches:
  - target:
      kind: HorizontalPodAutoscaler
    patch: |-
      - op: replace
        path: /spec/minReplicas
        value: 3
images:
  - name: ghcr.io/stefanprodan/podinfo
    newName: registry.example.com/podinfo
`,
}
