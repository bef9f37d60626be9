/* src/mca/psensor/base/static-components.h: the psensor components built into lamkit
 * (build/third_party/pmix). */
const pmix_mca_base_component_t *pmix_mca_psensor_base_static_components[] = {NULL};
