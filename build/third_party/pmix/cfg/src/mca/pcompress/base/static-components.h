/* src/mca/pcompress/base/static-components.h: the pcompress components built into lamkit
 * (build/third_party/pmix). */
const pmix_mca_base_component_t *pmix_mca_pcompress_base_static_components[] = {NULL};
