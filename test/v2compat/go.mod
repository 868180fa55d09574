module github.com/csi-node-proxy/csi-node-proxy/test/v2compat

go 1.26.0
