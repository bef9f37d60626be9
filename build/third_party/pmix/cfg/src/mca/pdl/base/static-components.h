/* src/mca/pdl/base/static-components.h: the pdl components built into lamkit
 * (build/third_party/pmix). */
const pmix_mca_base_component_t *pmix_mca_pdl_base_static_components[] = {NULL};
