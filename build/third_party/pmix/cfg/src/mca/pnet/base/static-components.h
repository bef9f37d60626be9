/* src/mca/pnet/base/static-components.h: the pnet components built into lamkit
 * (build/third_party/pmix). */
const pmix_mca_base_component_t *pmix_mca_pnet_base_static_components[] = {NULL};
