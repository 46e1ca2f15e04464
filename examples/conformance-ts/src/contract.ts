// The identity of garm.conformance.v1 as protoc-gen-garm computed it: the
// DescriptorHash and ContractVersion of the generated Go bindings
// (conformance/gen/garm/conformance/v1/conformancev1_garm.pb.go). The kit's
// discovery cases fail if they drift.
export const CONTRACT = {
  service: "garm.conformance.v1.Conformance",
  descriptorHash: "8986c38a86a8299c63c5c6c971b6dab851d955abe3534b58163ebda592d2297a",
  contractVersion: "dev",
};
