module github.com/csi-node-proxy/csi-node-proxy/examples/csi-driver

go 1.26.8

replace (
	github.com/csi-node-proxy/csi-node-proxy => ../..
	github.com/csi-node-proxy/csi-node-proxy/client => ../../client
)

require (
	github.com/container-storage-interface/spec v1.13.0
	github.com/csi-node-proxy/csi-node-proxy v0.0.0-00010101000000-000000000000
	github.com/csi-node-proxy/csi-node-proxy/client v0.0.0-00010101000000-000000000000
	github.com/go-logr/logr v1.4.4
	golang.org/x/sys v0.49.0
	google.golang.org/grpc v1.85.0
)

require (
	github.com/moby/sys/mountinfo v0.6.2 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
	k8s.io/mount-utils v0.28.0 // indirect
	k8s.io/utils v0.0.0-20230406110748-d93618cff8a2 // indirect
)
