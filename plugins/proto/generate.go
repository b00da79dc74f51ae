// Package proto holds the versioned plugin contract. The generated Go code
// lives in foya/v1 (package foyav1); plugin authors use plugins/sdk instead.
package proto

//go:generate sh -c "protoc --plugin=protoc-gen-go=$(go tool -n protoc-gen-go) --plugin=protoc-gen-go-grpc=$(go tool -n protoc-gen-go-grpc) --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative foya/v1/plugin.proto"
